package runtime

import (
	"fmt"

	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/engine/native"
	"github.com/astrid-go/astrid/internal/engine/static"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/manifest"
)

// Engines builds the engines that need kernel-wide resources (a wasm
// runtime, process supervision). A nil field means this kernel has no such
// engine: a capsule that needs it fails to load, saying so.
type Engines struct {
	// Wasm builds the engine of a capsule with an executable component.
	Wasm func(m *manifest.Manifest, h *host.Capsule) (capsule.Engine, error)
	// MCP builds the engine of one stdio [[mcp_server]]; env holds the
	// capsule's operator-set [env] values.
	MCP func(srv manifest.MCPServer, m *manifest.Manifest, h *host.Capsule, env map[string]string) (capsule.Engine, error)
}

// EngineFactory builds a capsule's engines once its host exists.
type EngineFactory func(h *host.Capsule) ([]capsule.Engine, error)

// engineFactory is the loader (seed 003): the native engine for a built-in,
// else a wasm engine when there is an executable component; one MCP engine
// per stdio server; the static engine last, always (see Load).
func (r *Runtime) engineFactory(c *Candidate, env map[string]string) EngineFactory {
	return func(h *host.Capsule) ([]capsule.Engine, error) {
		m := c.Manifest
		var es []capsule.Engine
		switch {
		case c.Code != nil:
			// Built-ins run natively even when they also build to wasm.
			es = append(es, native.New(c.Code(), h))
		case m.ExecutableComponent() != nil:
			if r.opts.Engines.Wasm == nil {
				return nil, fmt.Errorf("capsule %s has a wasm component, but this kernel has no wasm engine", m.ID())
			}
			e, err := r.opts.Engines.Wasm(m, h)
			if err != nil {
				return nil, fmt.Errorf("wasm engine: %w", err)
			}
			es = append(es, e)
		}
		for _, srv := range m.MCPServers {
			if !srv.Runs() {
				continue
			}
			if r.opts.Engines.MCP == nil {
				return nil, fmt.Errorf("capsule %s declares MCP server %s, but this kernel has no MCP engine", m.ID(), srv.ID)
			}
			e, err := r.opts.Engines.MCP(srv, m, h, env)
			if err != nil {
				return nil, fmt.Errorf("mcp engine %s: %w", srv.ID, err)
			}
			es = append(es, e)
		}
		return es, nil
	}
}

// withStatic appends the static engine every capsule gets.
func withStatic(f EngineFactory, m *manifest.Manifest) EngineFactory {
	return func(h *host.Capsule) ([]capsule.Engine, error) {
		es, err := f(h)
		if err != nil {
			return nil, err
		}
		return append(es, static.New(m, h)), nil
	}
}

// declaresStatic reports whether m has anything for the static engine.
func declaresStatic(m *manifest.Manifest) bool {
	return len(m.ContextFiles) > 0 || len(m.Skills) > 0 || len(m.Commands) > 0
}
