package gate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/manifest"
)

// homeFixture is the default layout started from the user's home: the
// workspace is ~ and $ASTRID_HOME is ~/.astrid inside it.
var homeFixture = Env{
	InstallDir: "/home/user/.astrid/capsules/fs",
	Workspace:  "/home/user",
	HomesDir:   "/home/user/.astrid/home",
	RunDir:     "/home/user/.astrid/run",
	Home:       "/home/user/.astrid",
}

func homeGate(t testing.TB, env Env, grants ...string) *Gate {
	t.Helper()
	g, err := New(manifest.Capabilities{FSRead: grants, FSWrite: grants}, env)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return g
}

// TestHomeIsNeverInsideAGrant tries every spelling of a path into
// $ASTRID_HOME against `*` with the workspace ~, a literal "/" and a literal
// grant on the home itself: each is refused with the home's reason, for reads
// and for writes. The controls next to it stay allowed.
func TestHomeIsNeverInsideAGrant(t *testing.T) {
	const why = "lies in Astrid's home ($ASTRID_HOME, /home/user/.astrid), which "
	cases := []struct {
		name   string
		grants []string
		path   string
		ok     bool // a control: allowed
	}{
		{name: "relative key", grants: []string{"*"}, path: ".astrid/secrets.key"},
		{name: "relative config", grants: []string{"*"}, path: ".astrid/config.toml"},
		{name: "relative state", grants: []string{"*"}, path: ".astrid/state.db"},
		{name: "the home itself", grants: []string{"*"}, path: ".astrid"},
		{name: "trailing slash", grants: []string{"*"}, path: ".astrid/"},
		{name: "upper case", grants: []string{"*"}, path: ".ASTRID/secrets.key"},
		{name: "mixed case", grants: []string{"*"}, path: ".Astrid/Secrets.key"},
		{name: "absolute", grants: []string{"*"}, path: "/home/user/.astrid/secrets.key"},
		{name: "absolute trailing slash", grants: []string{"*"}, path: "/home/user/.astrid/"},
		{name: "run socket", grants: []string{"*"}, path: ".astrid/run/astrid.sock"},
		{name: "another capsule", grants: []string{"*", "cwd://"}, path: ".astrid/capsules/other/Capsule.toml"},
		{name: "a principal's home through *", grants: []string{"*"}, path: ".astrid/home/alice/notes"},
		{name: "another principal's home", grants: []string{"*", "home://"}, path: ".astrid/home/bob/notes"},
		{name: "the homes directory", grants: []string{"*", "home://"}, path: ".astrid/home"},
		{name: "literal root", grants: []string{"/"}, path: "/home/user/.astrid/secrets.key"},
		{name: "literal home", grants: []string{"/home/user/.astrid"}, path: "/home/user/.astrid/config.toml"},
		{name: "literal inside home", grants: []string{"/home/user/.astrid/run"}, path: "/home/user/.astrid/run/token"},
		{name: "literal principal's home", grants: []string{"/home/user/.astrid/home/alice"}, path: "/home/user/.astrid/home/alice/x"},
		{name: "dotdot out of home://", grants: []string{"*", "home://"}, path: "home://../../secrets.key"},
		{name: "dotdot out of cwd://", grants: []string{"*", "cwd://"}, path: "cwd://../../secrets.key"},
		{name: "dotdot into home", grants: []string{"*"}, path: "src/../.astrid/secrets.key"},

		{name: "control: workspace file", grants: []string{"*"}, path: "src/main.go", ok: true},
		{name: "control: workspace itself", grants: []string{"*"}, path: ".", ok: true},
		{name: "control: workspace absolute", grants: []string{"*"}, path: "/home/user", ok: true},
		{name: "control: a name sharing the prefix", grants: []string{"*"}, path: ".astrid-notes/x", ok: true},
		{name: "control: a longer name", grants: []string{"*"}, path: "/home/user/.astridx", ok: true},
		{name: "control: the principal's own home", grants: []string{"*", "home://"}, path: "home://notes", ok: true},
		{name: "control: the principal's home by path, with home://", grants: []string{"*", "home://"}, path: ".astrid/home/alice/notes", ok: true},
		{name: "control: the install directory", grants: []string{"*", "cwd://"}, path: "cwd://data.json", ok: true},
		{name: "control: literal root elsewhere", grants: []string{"/"}, path: "/etc/hosts", ok: true},
	}
	for _, c := range cases {
		g := homeGate(t, homeFixture, c.grants...)
		for _, op := range []struct {
			capability string
			check      func(string, string) (Root, error)
		}{{"fs_read", g.FSRead}, {"fs_write", g.FSWrite}} {
			t.Run(c.name+"/"+op.capability, func(t *testing.T) {
				root, err := op.check("alice", c.path)
				if c.ok {
					if err != nil {
						t.Fatalf("control denied: %v", err)
					}
					return
				}
				if strings.Contains(c.path, "..") {
					wantDenied(t, err, op.capability, `".." component`)
					return
				}
				wantDenied(t, err, op.capability, why)
				if root != (Root{}) {
					t.Errorf("denial returned %+v", root)
				}
			})
		}
	}
}

// A request for the principal's home or the install directory that no
// home:// or cwd:// grant covers is refused as the home, and the refusal
// names the scheme that would open it.
func TestHomeSchemeWithoutItsGrant(t *testing.T) {
	for _, g := range []*Gate{homeGate(t, homeFixture, "*"), homeGate(t, homeFixture, "/tmp")} {
		_, err := g.FSRead("alice", "home://notes")
		wantDenied(t, err, "fs_read", "home://notes (/home/user/.astrid/home/alice/notes) lies in Astrid's home ($ASTRID_HOME, /home/user/.astrid), which only a home:// grant reaches")
		_, err = g.FSRead("alice", ".astrid/home/alice/notes")
		wantDenied(t, err, "fs_read", "only a home:// grant reaches")
		_, err = g.FSRead("alice", "cwd://x")
		wantDenied(t, err, "fs_read", "which only a cwd:// grant reaches")
	}
}

// Only roots that could reach the home carry it as their fence.
func TestHomeFence(t *testing.T) {
	g := homeGate(t, homeFixture, "*", "home://", "cwd://", "/")
	for _, c := range []struct {
		path   string
		fenced bool
	}{
		{"src/x", true}, {".", true}, {"/etc/hosts", true},
		{"home://x", false}, {"cwd://x", false},
	} {
		root, err := g.FSRead("alice", c.path)
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		if got := root.Fence(); (got != nil) != c.fenced || c.fenced && !slices.Contains(got, "/home/user/.astrid") {
			t.Errorf("%s: Fence() = %q, want fenced %v", c.path, got, c.fenced)
		}
	}
	root, _ := g.FSRead("alice", "link")
	wantDenied(t, root.CheckReached("fs_read", "link", "/home/user/.astrid/secrets.key"), "fs_read",
		"link (/home/user/.astrid/secrets.key) lies in Astrid's home ($ASTRID_HOME, /home/user/.astrid)")
	wantDenied(t, root.CheckReached("fs_read", "link", "/HOME/user/.astrid"), "fs_read", "Astrid's home")
	if err := root.CheckReached("fs_read", "link", "/home/user/src/x"); err != nil {
		t.Errorf("a workspace file: %v", err)
	}
	if got := g.Protected(); !slices.Equal(got, []string{"/home/user/.astrid"}) {
		t.Errorf("Protected() = %q", got)
	}
	if got := homeGate(t, fixture, "*").Protected(); got != nil {
		t.Errorf("Protected() without a home = %q", got)
	}
}

// A workspace inside the home grants nothing through `*`.
func TestWorkspaceInsideHome(t *testing.T) {
	env := homeFixture
	env.Workspace = "/home/user/.astrid/home/alice/project"
	g := homeGate(t, env, "*")
	for _, p := range []string{".", "main.go", "/home/user/.astrid/home/alice/project/x"} {
		_, err := g.FSRead("alice", p)
		wantDenied(t, err, "fs_read", "Astrid's home")
	}
}

// ProtectedDirs makes a relative home absolute and adds its resolved form
// when a symlink leads to it; the gate then refuses both spellings.
func TestProtectedDirs(t *testing.T) {
	if ProtectedDirs("") != nil {
		t.Error("ProtectedDirs(\"\") is not nil")
	}
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(tmp, "real-home")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(tmp, "link-home")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if got := ProtectedDirs(link); !slices.Equal(got, []string{filepath.ToSlash(link), filepath.ToSlash(real)}) {
		t.Errorf("ProtectedDirs(symlink) = %q", got)
	}
	if got := ProtectedDirs(real + "/"); !slices.Equal(got, []string{filepath.ToSlash(real)}) {
		t.Errorf("ProtectedDirs(real/) = %q", got)
	}
	t.Chdir(tmp)
	if got := ProtectedDirs("link-home"); !slices.Equal(got, []string{filepath.ToSlash(link), filepath.ToSlash(real)}) {
		t.Errorf("ProtectedDirs(relative) = %q", got)
	}
	g := homeGate(t, Env{Workspace: tmp, Home: link}, "*", "/")
	for _, p := range []string{"real-home/secrets.key", "link-home/secrets.key", real, link + "/config.toml"} {
		_, err := g.FSRead("default", p)
		wantDenied(t, err, "fs_read", "Astrid's home")
	}
	if _, err := New(manifest.Capabilities{}, Env{Home: "relative/home"}); err == nil {
		t.Error("New accepted a relative Env.Home")
	}
}
