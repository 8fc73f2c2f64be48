package wasm

import (
	"context"
	"errors"
	"fmt"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/manifest"
)

// A capsule with several [[component]]s runs each as its own module with
// its own instance pool, loaded in manifest order. Executable components
// take the bus calls the manifest binds (the first that has the handler
// answers); a library component is never called from the bus: the
// capsule's other components call its handlers through the host
// (component_call), and only those whose `link` names it. wazero cannot
// link two Go modules into one instance as the Component Model does
// (docs/rationale/wasm.md, "Why are library components their own
// instances?").

// maxLinkDepth bounds a chain of component calls (A calls B calls A …),
// so a cycle ends in an error instead of waiting for free instances.
const maxLinkDepth = 4

// linkSet is one capsule's components, in manifest order.
type linkSet struct {
	engines []*Engine
	byName  map[string]*Engine // library components by id
}

// Components is the engine of a capsule with more than one component: it
// loads them in order and unloads them in reverse, and a component that
// fails to load unloads those loaded before it, so no capsule is ever
// half loaded.
type Components struct {
	links *linkSet
	m     *manifest.Manifest
}

var _ capsule.Engine = (*Components)(nil)

func newComponents(r *Runtime, m *manifest.Manifest, h *host.Capsule) (*Components, error) {
	ls := &linkSet{byName: map[string]*Engine{}}
	for i := range m.Components {
		comp := &m.Components[i]
		if comp.Path == "" {
			return nil, fmt.Errorf("wasm: capsule %s: component %q has no location (a manifest read from disk sets one)", m.ID(), comp.File)
		}
		e := newEngine(r, m, comp, h)
		e.links = ls
		ls.engines = append(ls.engines, e)
		if e.library() {
			ls.byName[comp.ID] = e
		}
	}
	return &Components{links: ls, m: m}, nil
}

// componentName is how errors and logs name a component: its id and file.
func componentName(c *manifest.Component) string {
	if c.ID == "" {
		return c.File
	}
	return fmt.Sprintf("%s (%s)", c.ID, c.File)
}

// Name implements capsule.Engine.
func (c *Components) Name() string { return "wasm" }

// Engines are the components' engines, in manifest order.
func (c *Components) Engines() []*Engine { return c.links.engines }

// Load implements capsule.Engine: each component in order; the first that
// fails (a bad file, a trap in _initialize) stops the load, and the ones
// already loaded are unloaded.
func (c *Components) Load(ctx context.Context) error {
	for i, e := range c.links.engines {
		if err := e.Load(ctx); err != nil {
			for j := i - 1; j >= 0; j-- {
				_ = c.links.engines[j].Unload(context.WithoutCancel(ctx))
			}
			return fmt.Errorf("component %d of %d: %w", i+1, len(c.links.engines), err)
		}
	}
	return nil
}

// WaitReady implements capsule.Engine: Load made every component's first
// instance.
func (c *Components) WaitReady(ctx context.Context) error { return ctx.Err() }

// Unload implements capsule.Engine, in reverse order.
func (c *Components) Unload(ctx context.Context) error {
	var errs []error
	for i := len(c.links.engines) - 1; i >= 0; i-- {
		errs = append(errs, c.links.engines[i].Unload(ctx))
	}
	return errors.Join(errs...)
}

// Invoke implements capsule.Engine: the executable components in order,
// skipping those without the handler.
func (c *Components) Invoke(ctx context.Context, inv hostapi.Invocation) (hostapi.Verdict, error) {
	for _, e := range c.links.engines {
		v, err := e.Invoke(ctx, inv)
		if errors.Is(err, capsule.ErrNotSupported) {
			continue
		}
		return v, err
	}
	return hostapi.Verdict{}, capsule.ErrNotSupported
}

// Health implements capsule.Engine: the first component not ready, else
// ready.
func (c *Components) Health() capsule.Health {
	h := capsule.Health{State: capsule.Unloaded}
	for i, e := range c.links.engines {
		eh := e.Health()
		if eh.State == capsule.Failed {
			return eh
		}
		if i == 0 || eh.State != capsule.Ready {
			h = eh
		}
	}
	return h
}

// ComponentCall is the request of component_call (docs/abi.md,
// Components): a handler of a library component of the same capsule.
type ComponentCall struct {
	Component string `json:"component"`
	Handler   string `json:"handler"`
}

type linkDepthKey struct{}

// callComponent runs a library component's handler for the calling
// component, as the calling principal, and answers its verdict's payload.
// The caller's manifest entry must link the library by id.
func (e *Engine) callComponent(ctx context.Context, principal string, req ComponentCall, payload []byte) ([]byte, error) {
	const op = "component_call"
	if e.links == nil {
		return nil, hostapi.Errorf(hostapi.CodeDenied, op, "capsule %s has one component: there is no library to call", e.m.ID())
	}
	if req.Component == e.comp.ID && e.comp.ID != "" {
		return nil, hostapi.Errorf(hostapi.CodeDenied, op, "component %s cannot call itself through the host; call the function directly", req.Component)
	}
	lib := e.links.byName[req.Component]
	if lib == nil {
		return nil, hostapi.Errorf(hostapi.CodeNotFound, op, "capsule %s has no library component with id %q", e.m.ID(), req.Component)
	}
	if !linked(e.comp, req.Component) {
		return nil, hostapi.Errorf(hostapi.CodeDenied, op, "component %s does not link %q: add it to the component's link = [...] in Capsule.toml", componentName(e.comp), req.Component)
	}
	depth, _ := ctx.Value(linkDepthKey{}).(int)
	if depth >= maxLinkDepth {
		return nil, hostapi.Errorf(hostapi.CodeDenied, op, "component calls nest deeper than %d (a cycle between %s and %q?)", maxLinkDepth, componentName(e.comp), req.Component)
	}
	ctx = context.WithValue(ctx, linkDepthKey{}, depth+1)
	v, err := lib.invoke(ctx, hostapi.Invocation{Handler: req.Handler, Principal: principal, Payload: payload})
	switch {
	case errors.Is(err, capsule.ErrNotSupported):
		return nil, hostapi.Errorf(hostapi.CodeNotFound, op, "library component %s has no handler %q", componentName(lib.comp), req.Handler)
	case err != nil:
		return nil, fmt.Errorf("library component %s: handler %s: %w", componentName(lib.comp), req.Handler, err)
	case v.Action == hostapi.Deny:
		return nil, hostapi.Errorf(hostapi.CodeDenied, op, "library component %s: handler %s refused: %s", componentName(lib.comp), req.Handler, v.Reason)
	}
	return v.Payload, nil
}

func linked(c *manifest.Component, id string) bool {
	for _, l := range c.Link {
		if l == id {
			return true
		}
	}
	return false
}
