package capsule

import (
	"fmt"
	"sort"
	"sync"
)

// Registry holds the loaded capsules by id.
type Registry struct {
	mu       sync.RWMutex
	capsules map[string]*Composite
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{capsules: map[string]*Composite{}} }

// Add registers c; an id already present is an error.
func (r *Registry) Add(c *Composite) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.capsules[c.ID()]; dup {
		return fmt.Errorf("registry: capsule %s is already loaded", c.ID())
	}
	r.capsules[c.ID()] = c
	return nil
}

// Replace puts c in place of the loaded capsule with its id, in one step,
// and returns the one it replaced (false when none was loaded: then c is
// not added).
func (r *Registry) Replace(c *Composite) (*Composite, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	old, ok := r.capsules[c.ID()]
	if ok {
		r.capsules[c.ID()] = c
	}
	return old, ok
}

// Remove drops id and returns what it held.
func (r *Registry) Remove(id string) (*Composite, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.capsules[id]
	delete(r.capsules, id)
	return c, ok
}

// Get returns the capsule id.
func (r *Registry) Get(id string) (*Composite, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	c, ok := r.capsules[id]
	return c, ok
}

// List returns the capsules sorted by id.
func (r *Registry) List() []*Composite {
	r.mu.RLock()
	out := make([]*Composite, 0, len(r.capsules))
	for _, c := range r.capsules {
		out = append(out, c)
	}
	r.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID() < out[j].ID() })
	return out
}

// HoldsToolMiddleware reports whether capsule id is loaded and holds
// tool_middleware (DESIGN §4c): a frontend takes a consolidated tool result
// only from such a capsule.
func (r *Registry) HoldsToolMiddleware(id string) bool {
	c, ok := r.Get(id)
	return ok && c.Manifest().Capabilities.ToolMiddleware
}
