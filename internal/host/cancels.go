package host

import (
	"context"
	"sync"
)

// Cancels is the kernel's registry of cancel keys: a call registers its key
// (a tool call id) and a cancel request naming the key interrupts every call
// holding it.
type Cancels struct {
	mu   sync.Mutex
	next uint64
	keys map[string]map[uint64]context.CancelCauseFunc
}

// NewCancels returns an empty registry.
func NewCancels() *Cancels {
	return &Cancels{keys: map[string]map[uint64]context.CancelCauseFunc{}}
}

// ErrCancelled is the cause a cancelled call's context carries.
var ErrCancelled = context.Canceled

// register binds key to cancel and returns the function that unbinds it.
func (c *Cancels) register(key string, cancel context.CancelCauseFunc) func() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	id := c.next
	m := c.keys[key]
	if m == nil {
		m = map[uint64]context.CancelCauseFunc{}
		c.keys[key] = m
	}
	m[id] = cancel
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if m := c.keys[key]; m != nil {
			delete(m, id)
			if len(m) == 0 {
				delete(c.keys, key)
			}
		}
	}
}

// Cancel interrupts every call holding one of keys and returns how many.
func (c *Cancels) Cancel(cause error, keys ...string) int {
	c.mu.Lock()
	var fns []context.CancelCauseFunc
	for _, k := range keys {
		for _, f := range c.keys[k] {
			fns = append(fns, f)
		}
	}
	c.mu.Unlock()
	for _, f := range fns {
		f(cause)
	}
	return len(fns)
}
