package gate

import (
	"fmt"
	"strings"
)

// fsBase says which directory an fs grant hangs under.
type fsBase int

const (
	baseWorkspace fsBase = iota + 1 // `*`
	baseInstall                     // cwd://
	baseHome                        // home://, resolved per principal
	baseLiteral                     // an absolute path, taken as written
)

// fsGrant is one parsed fs_read or fs_write entry.
type fsGrant struct {
	written string
	base    fsBase
	sub     string // clean, relative to the base; "" for the base itself
}

// parseFSGrants keeps the grants the gate can honour and records the rest as
// inert. It fails only when a grant needs an Env directory the host did not
// supply, or when `*` would cover the whole file system.
func (g *Gate) parseFSGrants(capability string, written []string) ([]fsGrant, error) {
	var grants []fsGrant
	for _, w := range written {
		gr, reason := parseFSGrant(w)
		if reason != "" {
			g.markInert(capability, w, reason)
			continue
		}
		switch {
		case gr.base == baseWorkspace && g.env.Workspace == "":
			return nil, fmt.Errorf("gate: %s grant %q needs Env.Workspace", capability, w)
		case gr.base == baseWorkspace && g.env.Workspace == "/":
			return nil, fmt.Errorf("gate: %s grant %q: the workspace is the file system root, and * never grants the whole file system", capability, w)
		case gr.base == baseInstall && g.env.InstallDir == "":
			return nil, fmt.Errorf("gate: %s grant %q needs Env.InstallDir", capability, w)
		case gr.base == baseHome && g.env.HomesDir == "":
			return nil, fmt.Errorf("gate: %s grant %q needs Env.HomesDir", capability, w)
		}
		grants = append(grants, gr)
	}
	return grants, nil
}

// parseFSGrant reads one entry, or says why it matches nothing. Scheme rests
// lose their leading slashes, so `cwd:///etc` is <install>/etc (DESIGN §4a).
func parseFSGrant(w string) (fsGrant, string) {
	if w == "*" {
		return fsGrant{written: w, base: baseWorkspace}, ""
	}
	if reason := oddity(w); reason != "" {
		return fsGrant{}, reason
	}
	if strings.Contains(w, "*") {
		return fsGrant{}, "`*` is a wildcard only on its own"
	}
	gr := fsGrant{written: w}
	rest := ""
	if scheme, r, ok := splitScheme(w); ok {
		switch scheme {
		case "cwd":
			gr.base = baseInstall
		case "home":
			gr.base = baseHome
		default:
			return fsGrant{}, "unrecognised scheme (only *, cwd://, home:// and absolute paths grant anything)"
		}
		rest = strings.TrimLeft(r, "/")
	} else {
		if !strings.HasPrefix(w, "/") {
			return fsGrant{}, "neither *, cwd://, home:// nor an absolute path"
		}
		gr.base = baseLiteral
		rest = w[1:]
	}
	sub, reason := relClean(rest)
	if reason != "" {
		return fsGrant{}, reason
	}
	gr.sub = sub
	return gr, ""
}

// baseDir is the directory the grant hangs under for principal: the trusted
// directory an os.Root is first opened on.
func (gr fsGrant) baseDir(env Env, principal string) string {
	switch gr.base {
	case baseWorkspace:
		return env.Workspace
	case baseInstall:
		return env.InstallDir
	case baseHome:
		return join(env.HomesDir, principal)
	}
	return join("/", gr.sub)
}

// dir is the granted directory itself.
func (gr fsGrant) dir(env Env, principal string) string {
	if gr.base == baseLiteral {
		return join("/", gr.sub)
	}
	return join(gr.baseDir(env, principal), gr.sub)
}
