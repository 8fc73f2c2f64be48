package gate

import (
	"fmt"
	"strings"

	"github.com/astrid-go/astrid/ipc"
)

// Root is where an allowed file request lands. The host opens an os.Root on
// Base, then (when Dir is deeper) Base's OpenRoot(Sub()), and does the I/O on
// Rel inside it. Opening Dir through Base matters: a capsule that may write
// under Base could have planted a symlink where the granted directory should
// be, and os.OpenRoot on Dir would follow it anywhere; Root.OpenRoot follows
// it only within Base.
type Root struct {
	Grant string // the grant as written, e.g. "*" or "home://notes"
	Dir   string // absolute, clean granted directory
	Rel   string // the path below Dir, slash-separated, "." for Dir itself
	Base  string // the trusted directory Dir lies in: the workspace, the install dir, the principal's home, or Dir itself for a literal grant

	fence *fence // what the I/O must not reach (Fence); nil for home:// and cwd://
}

// Sub is Dir relative to Base ("." when they are the same directory).
func (r Root) Sub() string {
	if rel, ok := within(r.Dir, r.Base); ok {
		return rel
	}
	return "."
}

// Path is the absolute path the request named.
func (r Root) Path() string {
	if r.Rel == "." {
		return r.Dir
	}
	return join(r.Dir, r.Rel)
}

// FSRead checks a read of path for principal against fs_read.
//
// path may be absolute, relative to the workspace ("." is the workspace
// itself), or spelled `home://rest` (rest under the principal's home) or
// `cwd://rest` (rest under the install directory; leading slashes of rest are
// dropped, as in grants). Capsules may use the scheme forms because they do
// not know where homes or their install directory are on this host. No path
// is cleaned: see package doc. principal must be a valid principal id even
// when no home:// grant is involved; the host passes "default" for system
// events (DESIGN §4a).
func (g *Gate) FSRead(principal, path string) (Root, error) {
	return g.checkFS("fs_read", g.caps.FSRead, g.fsRead, principal, path)
}

// FSWrite checks a write (create, modify, remove) against fs_write; see
// FSRead for the path forms.
func (g *Gate) FSWrite(principal, path string) (Root, error) {
	return g.checkFS("fs_write", g.caps.FSWrite, g.fsWrite, principal, path)
}

// checkFS picks, among the grants covering the path, the one with the
// longest directory: the deepest root confines symlinks the most, and the
// answer does not depend on the order grants were written in (ties, which
// only equal directories can produce, go to the first declared).
func (g *Gate) checkFS(capability string, written []string, grants []fsGrant, principal, path string) (Root, error) {
	// The principal names a directory under HomesDir; ipc's rule keeps "."
	// and ".." (and so every other principal's home) out of reach.
	if err := ipc.ValidatePrincipal(principal); err != nil {
		return Root{}, deny(capability, path, fmt.Sprintf("was requested for a principal that is not valid (%v)", err))
	}
	abs, reason := g.resolve(principal, path)
	if reason != "" {
		return Root{}, deny(capability, path, reason)
	}
	var best Root
	var bestBase fsBase
	found := false
	for _, gr := range grants {
		dir := gr.dir(g.env, principal)
		rel, ok := within(abs, dir)
		if !ok || found && len(dir) <= len(best.Dir) {
			continue
		}
		best = Root{Grant: gr.written, Dir: dir, Rel: rel, Base: gr.baseDir(g.env, principal)}
		bestBase = gr.base
		found = true
	}
	// $ASTRID_HOME is reached through home:// and cwd:// only (home.go).
	// When nothing grants the path either, the home's refusal is the one
	// given, since it holds whatever the manifest says.
	if bestBase != baseHome && bestBase != baseInstall {
		if d, in := g.home.holds(abs); in {
			return Root{}, homeDenial(capability, path, abs, d, g.schemeFor(principal, abs))
		}
		best.fence = g.home
	}
	if !found {
		shown := "is outside "
		if abs != path {
			shown = "(" + display(abs) + ") is outside "
		}
		return Root{}, deny(capability, path, shown+list(written))
	}
	return best, nil
}

// schemeFor names the scheme whose grant would open abs for principal
// ("home://" in the principal's home, "cwd://" in the install directory),
// or "".
func (g *Gate) schemeFor(principal, abs string) string {
	if g.env.HomesDir != "" {
		if _, ok := within(abs, join(g.env.HomesDir, principal)); ok {
			return "home://"
		}
	}
	if g.env.InstallDir != "" {
		if _, ok := within(abs, g.env.InstallDir); ok {
			return "cwd://"
		}
	}
	return ""
}

// resolve turns a request into a clean absolute path, or says why it cannot.
func (g *Gate) resolve(principal, path string) (string, string) {
	if reason := oddity(path); reason != "" {
		return "", reason
	}
	base, rest := g.env.Workspace, path
	switch scheme, r, ok := splitScheme(path); {
	case ok && scheme == "home":
		if g.env.HomesDir == "" {
			return "", "names home://, and this host has no homes directory"
		}
		base, rest = join(g.env.HomesDir, principal), strings.TrimLeft(r, "/")
	case ok && scheme == "cwd":
		if g.env.InstallDir == "" {
			return "", "names cwd://, and this capsule has no install directory"
		}
		base, rest = g.env.InstallDir, strings.TrimLeft(r, "/")
	case ok:
		return "", fmt.Sprintf("has the unrecognised scheme %q", scheme+"://")
	case strings.HasPrefix(path, "/"):
		base, rest = "/", path[1:]
	case path == ".":
		rest = ""
		fallthrough
	default:
		if base == "" {
			return "", "is relative, and there is no workspace to resolve it against"
		}
	}
	sub, reason := relClean(rest)
	if reason != "" {
		return "", reason
	}
	return join(base, sub), ""
}
