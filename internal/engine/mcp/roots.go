package mcp

//lint:file-ignore SA1019 roots are deprecated by SEP-2577 (2026-07-28) but work through the deprecation window, and DESIGN §12 asks for them; servers on older protocols use them

import (
	"context"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A stdio server's roots/list is answered with the capsule's granted
// directories (DESIGN §12): fs_read and fs_write resolved for the
// workspace and principal the server runs for, the same directories its
// confinement lets it touch. A server that narrows itself to its roots
// (server-filesystem) then works on what the grants allow, whatever its
// arguments named; the grant is the boundary. A remote server gets no
// roots (docs/rationale/mcp.md).

// rootsFor are the roots of a server running in workspace with the granted
// dirs: the workspace first when a grant covers it, then dirs. Order is
// meaning: server-filesystem resolves a relative path against the first
// root that holds it, so "." must be the workspace the server runs in,
// not a read-only grant listed before it (the package directory a
// manifest grants so node can load the server, say).
func rootsFor(workspace string, dirs []string) []*mcp.Root {
	if workspace != "" && filepath.IsAbs(workspace) {
		for _, d := range dirs {
			if d != "" && filepath.IsAbs(d) && within(filepath.Clean(workspace), filepath.Clean(d)) {
				return rootsOf(append([]string{workspace}, dirs...))
			}
		}
	}
	return rootsOf(dirs)
}

// within reports whether path is dir or lies below it (both clean).
func within(path, dir string) bool {
	if path == dir || dir == "/" {
		return true
	}
	return strings.HasPrefix(path, dir+string(filepath.Separator))
}

// rootsOf are dirs as MCP roots (file:// URIs), each once, in order.
func rootsOf(dirs []string) []*mcp.Root {
	var seen []string
	var out []*mcp.Root
	for _, d := range dirs {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		if slices.Contains(seen, d) {
			continue
		}
		seen = append(seen, d)
		out = append(out, &mcp.Root{URI: (&url.URL{Scheme: "file", Path: d}).String(), Name: filepath.Base(d)})
	}
	return out
}

// rootsInOrder answers roots/list with roots in the order given. The SDK
// keeps a client's roots sorted by URI, so with a workspace under /tmp and
// a module directory under /check the module directory came first, and
// server-filesystem resolved "." against it (listing node_modules in CI,
// never where the repository sorted after /tmp).
func rootsInOrder(roots []*mcp.Root) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "roots/list" || len(roots) == 0 {
				return next(ctx, method, req)
			}
			return &mcp.ListRootsResult{Roots: slices.Clone(roots)}, nil
		}
	}
}

// grantedRoots are the roots of the server of k: the capsule's fs grants
// resolved for k's workspace and principal.
func (e *Engine) grantedRoots(k scopeKey) []*mcp.Root {
	g, err := e.host.Gate().WithWorkspace(k.workspace)
	if err != nil {
		e.log.Warn("mcp: the server gets no roots: its workspace resolves no grants", "workspace", k.workspace, "err", err)
		return nil
	}
	read, write := g.FSDirs(k.principal)
	return rootsFor(k.workspace, append(read, write...))
}
