package gate

import "fmt"

// WithWorkspace returns the gate with its workspace replaced by ws: the same
// grants, with `*` and relative request paths resolving under ws. A daemon
// serves many workspaces at once, and each request resolves against its own
// (DESIGN §4a); the grants are parsed once, so this costs a copy of the
// gate. ws == "" gives a gate with no workspace: `*` grants nothing and a
// relative path is refused. It fails for a ws New would refuse (not
// absolute, odd, the file system root under a `*` grant).
func (g *Gate) WithWorkspace(ws string) (*Gate, error) {
	if ws != "" {
		var err error
		if ws, err = cleanRoot(ws); err != nil {
			return nil, fmt.Errorf("gate: workspace: %w", err)
		}
	}
	if ws == g.env.Workspace {
		return g, nil
	}
	n := *g
	n.env.Workspace = ws
	n.fsRead = withoutWorkspace(g.fsRead, ws)
	n.fsWrite = withoutWorkspace(g.fsWrite, ws)
	if ws == "/" && (len(n.fsRead) < len(g.fsRead) || len(n.fsWrite) < len(g.fsWrite)) {
		return nil, fmt.Errorf("gate: the workspace is the file system root, and * never grants the whole file system")
	}
	return &n, nil
}

// withoutWorkspace is grants without its `*` entries when the workspace ws
// cannot back them (none, or the root); grants itself otherwise.
func withoutWorkspace(grants []fsGrant, ws string) []fsGrant {
	if ws != "" && ws != "/" {
		return grants
	}
	var out []fsGrant
	for _, gr := range grants {
		if gr.base != baseWorkspace {
			out = append(out, gr)
		}
	}
	return out
}

// Workspace is the directory `*` and relative paths resolve under; "" when
// there is none.
func (g *Gate) Workspace() string { return g.env.Workspace }
