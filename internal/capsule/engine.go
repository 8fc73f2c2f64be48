package capsule

import (
	"context"
	"errors"
	"sync"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/manifest"
)

// ErrNotSupported is answered by an engine that does not handle a call; the
// Composite then asks the next engine.
var ErrNotSupported = errors.New("not supported by this engine")

// ErrGaveUp is wrapped by the failure of an engine that restarted what it
// runs (an MCP server's process) as often as it may, in a row: the
// runtime's health monitor shows it and does not restart the capsule
// again by itself.
var ErrGaveUp = errors.New("gave up restarting")

// Engine is one way of running (part of) a capsule.
type Engine interface {
	// Name identifies the engine in status output: "native", "wasm",
	// "mcp:<server id>", "static".
	Name() string
	// Load prepares the engine; it may start processes or instances.
	Load(ctx context.Context) error
	// WaitReady blocks until the engine can take calls or ctx ends.
	WaitReady(ctx context.Context) error
	// Invoke runs one handler call. An engine that has no such handler
	// answers ErrNotSupported.
	Invoke(ctx context.Context, inv hostapi.Invocation) (hostapi.Verdict, error)
	// Unload releases everything Load acquired; best effort, idempotent.
	Unload(ctx context.Context) error
	// Health reports the engine's state and its last error.
	Health() Health
}

// State is a capsule's or engine's lifecycle state.
type State int

// The lifecycle: Unloaded → Loading → Ready ⇄ (calls) → Unloading → Unloaded;
// Loading or Ready may end in Failed.
const (
	Unloaded State = iota
	Loading
	Ready
	Failed
	Unloading
)

func (s State) String() string {
	switch s {
	case Unloaded:
		return "unloaded"
	case Loading:
		return "loading"
	case Ready:
		return "ready"
	case Failed:
		return "failed"
	case Unloading:
		return "unloading"
	}
	return "unknown"
}

// Health is a state with the error that caused it, if any.
type Health struct {
	State State
	Err   error
}

// SurfaceProvider is implemented by engines whose bus surface is known only
// once they are loaded: an MCP server's tools become interceptors on
// tool.v1.execute.<server>:<tool> and publish grants on their result topics.
// The kernel adds the surface to the capsule's manifest ACL at registration;
// it can name only tool-convention topics of the engine's own tools (the
// engine derives them; the server cannot choose arbitrary topics).
type SurfaceProvider interface {
	Surface() Surface
}

// Surface is what an engine adds to its capsule's ACL and interceptors.
type Surface struct {
	Publish      []string
	Subscribe    []string
	Interceptors []manifest.Interceptor
}

// HealthCell holds an engine's Health for concurrent readers. An engine
// whose health changes on its own (not together with other state it guards)
// embeds it and gets Engine.Health.
type HealthCell struct {
	mu sync.Mutex
	h  Health
}

// Health implements Engine.Health.
func (c *HealthCell) Health() Health {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.h
}

// SetHealth records the engine's state and the error that caused it.
func (c *HealthCell) SetHealth(s State, err error) {
	c.mu.Lock()
	c.h = Health{State: s, Err: err}
	c.mu.Unlock()
}
