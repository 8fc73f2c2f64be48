package gate

import "strings"

// RunScheme names the kernel's run directory ($ASTRID_HOME/run, Env.RunDir)
// in a unix net_bind grant and address: "unix:run://astrid.sock". A
// built-in manifest cannot spell $ASTRID_HOME, which differs per install;
// the scheme lets it name the daemon's socket wherever home is.
const RunScheme = "run://"

// runPath resolves a run:// unix path (without "unix:") to an absolute one;
// other paths come back unchanged. ok is false when p is run:// and the
// gate has no RunDir or the rest is not a clean relative path.
func (g *Gate) runPath(p string) (abs string, reason string) {
	rest, isRun := strings.CutPrefix(p, RunScheme)
	if !isRun {
		return p, ""
	}
	if g.env.RunDir == "" {
		return "", "names the run directory, which this kernel has not set"
	}
	if rest == "" || strings.HasPrefix(rest, "/") {
		return "", "has no relative path after run://"
	}
	if reason := oddity(rest); reason != "" {
		return "", reason
	}
	if _, reason := relClean(rest); reason != "" {
		return "", reason
	}
	return g.env.RunDir + "/" + rest, ""
}

// ResolveBind rewrites a "unix:run://name" address to the absolute socket
// path it names; any other address comes back as it was (NetBind then
// judges it).
func (g *Gate) ResolveBind(addr string) string {
	p, ok := strings.CutPrefix(addr, "unix:")
	if !ok {
		return addr
	}
	abs, reason := g.runPath(p)
	if reason != "" {
		return addr
	}
	return "unix:" + abs
}

// RunDir is the run directory run:// names ("" when unset).
func (g *Gate) RunDir() string { return g.env.RunDir }
