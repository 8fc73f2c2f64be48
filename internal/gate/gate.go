package gate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/astrid-go/astrid/manifest"
)

// Env is where one capsule's path grants point on this host. Paths are
// slash-separated and absolute; New cleans them. A field may be empty when no
// grant needs it (then requests that would resolve there are denied).
type Env struct {
	InstallDir string // the capsule's install directory: cwd:// resolves here
	Workspace  string // the workspace root: `*` and relative request paths resolve here
	HomesDir   string // $ASTRID_HOME/home: home:// resolves to HomesDir/<principal>
	RunDir     string // $ASTRID_HOME/run: run:// in a unix net_bind resolves here
	// Home is $ASTRID_HOME. No fs request reaches it or anything below it,
	// except through home:// and cwd:// (home.go). Empty: no such fence
	// (tests of the lexical rules alone).
	Home string
}

// Gate answers capability questions for one capsule. It is immutable.
type Gate struct {
	env        Env
	caps       manifest.Capabilities
	fsRead     []fsGrant
	fsWrite    []fsGrant
	net        []hostGrant
	netConnect []endpointGrant
	netBindTCP []endpointGrant
	netBindUDS []string // unix: path patterns, prefix stripped
	identity   int      // highest level granted, levelNone if none
	inert      []string
	home       *fence // nil without Env.Home
}

// New checks env and pre-parses the grants in caps. Env errors are returned
// (they are the host's bugs, not the capsule's); a grant the gate cannot
// honour — an unknown scheme, a URL in net, a ".." in a path — matches nothing
// and is listed by Inert so that a caller can warn about it.
func New(caps manifest.Capabilities, env Env) (*Gate, error) {
	var err error
	for _, root := range []struct {
		name string
		dir  *string
	}{{"InstallDir", &env.InstallDir}, {"Workspace", &env.Workspace}, {"HomesDir", &env.HomesDir}, {"RunDir", &env.RunDir}, {"Home", &env.Home}} {
		if *root.dir == "" {
			continue
		}
		if *root.dir, err = cleanRoot(*root.dir); err != nil {
			return nil, fmt.Errorf("gate: Env.%s: %w", root.name, err)
		}
	}
	g := &Gate{env: env, caps: cloneCaps(caps)}
	if env.Home != "" {
		g.home = &fence{dirs: ProtectedDirs(env.Home)}
	}
	caps = g.caps
	if g.fsRead, err = g.parseFSGrants("fs_read", caps.FSRead); err != nil {
		return nil, err
	}
	if g.fsWrite, err = g.parseFSGrants("fs_write", caps.FSWrite); err != nil {
		return nil, err
	}
	g.parseNet(caps.Net)
	g.netConnect = g.parseEndpoints("net_connect", caps.NetConnect)
	g.parseNetBind(caps.NetBind)
	g.parseIdentity(caps.Identity)
	return g, nil
}

// cloneCaps copies the lists so that a caller reusing its slices cannot
// change what an existing Gate allows.
func cloneCaps(c manifest.Capabilities) manifest.Capabilities {
	for _, l := range []*[]string{&c.Net, &c.NetBind, &c.NetConnect, &c.Kv, &c.FSRead, &c.FSWrite, &c.HostProcess, &c.Identity} {
		*l = slices.Clone(*l)
	}
	return c
}

// cleanRoot validates one Env directory. The host supplies these, so a bad one
// is an error rather than a silent deny-all.
func cleanRoot(dir string) (string, error) {
	if !strings.HasPrefix(dir, "/") {
		return "", fmt.Errorf("%s is not an absolute path", display(dir))
	}
	if reason := oddity(dir); reason != "" {
		return "", fmt.Errorf("%s %s", display(dir), reason)
	}
	rest, reason := relClean(dir[1:])
	if reason != "" {
		return "", fmt.Errorf("%s %s", display(dir), reason)
	}
	return "/" + rest, nil
}

// Inert lists the grants that match nothing, each with the reason, in
// declaration order (e.g. `fs_read "workspace://src": unrecognised scheme`).
func (g *Gate) Inert() []string {
	return append([]string(nil), g.inert...)
}

func (g *Gate) markInert(capability, grant, reason string) {
	g.inert = append(g.inert, fmt.Sprintf("%s %q: %s", capability, grant, reason))
}

// AllowPromptInjection reports whether this capsule's hook responses may
// alter the system prompt; the prompt builder strips those fields otherwise.
func (g *Gate) AllowPromptInjection() bool { return g.caps.AllowPromptInjection }
