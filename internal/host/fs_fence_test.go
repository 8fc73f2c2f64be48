//go:build unix

package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/manifest"
)

// homeLayout is a user's home directory as the workspace, with the default
// $ASTRID_HOME (.astrid) inside it, its secrets in place, and the planted
// links an attacker would use.
type homeLayout struct {
	ws, home string
	secrets  map[string]string // path under home → content
}

func newHomeLayout(t *testing.T) homeLayout {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l := homeLayout{ws: ws, home: filepath.Join(ws, ".astrid"), secrets: map[string]string{
		"secrets.key":                 "KEY-0123456789",
		"config.toml":                 "[admin]\ntoken = \"t0p\"\n",
		"state.db":                    "SQLite format 3\x00...",
		"run/admin.token":             "run-token",
		"home/alice/diary":            "alice's diary",
		"capsules/other/Capsule.toml": "[package]\nname = \"other\"\n",
	}}
	for rel, content := range l.secrets {
		p := filepath.Join(l.home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"src/deep", "home-like"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{"src/a.txt": "hello", "src/deep/b.txt": "deep", "notes.md": "mine"}
	for rel, content := range files {
		if err := os.WriteFile(filepath.Join(ws, rel), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"key":              ".astrid/secrets.key",
		"cfg":              ".astrid/config.toml",
		"dot":              ".astrid",
		"chain1":           "chain2",
		"chain2":           "dot/secrets.key",
		"src/deep/up":      "../../.astrid/secrets.key",
		"src/deep/updir":   "../../.astrid",
		"src/ok":           "a.txt",
		"abs":              filepath.Join(l.home, "secrets.key"),
		"procroot":         "/proc/self/root" + l.home,
		"runlink":          ".astrid/run",
		"home-like/escape": "../.astrid/home",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(l.home, "secrets.key"), filepath.Join(ws, "hardkey")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(l.home, "run/admin.token"), filepath.Join(ws, "hardtoken")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(ws, "notes.md"), filepath.Join(ws, "notes-link.md")); err != nil {
		t.Fatal(err)
	}
	return l
}

// unchanged fails the test if any secret in the home was changed, or if a
// file appeared in the home's top directory.
func (l homeLayout) unchanged(t *testing.T) {
	t.Helper()
	for rel, want := range l.secrets {
		if got, err := os.ReadFile(filepath.Join(l.home, rel)); err != nil || string(got) != want {
			t.Errorf("%s in the home is now %q (%v)", rel, got, err)
		}
	}
	entries, _ := os.ReadDir(l.home)
	for _, e := range entries {
		switch e.Name() {
		case "secrets.key", "config.toml", "state.db", "run", "home", "capsules":
		default:
			t.Errorf("%s appeared in the home", e.Name())
		}
	}
}

// homeCall binds a capsule with the given grants to the layout (workspace
// ~, $ASTRID_HOME ~/.astrid, homes under it) and begins a call for alice.
func homeCall(t *testing.T, l homeLayout, home string, grants string) *Call {
	t.Helper()
	f := newFixture(t)
	f.deps.Workspace = l.ws
	f.deps.HomesDir = filepath.Join(l.home, "home")
	f.deps.Home = home
	c := f.capsule(t, `
[package]
name = "fsattack"
version = "0.1.0"
[capabilities]
fs_read = [`+grants+`]
fs_write = [`+grants+`]
`)
	call, _ := c.Begin(context.Background(), "alice")
	t.Cleanup(call.End)
	return call
}

// wantHomeRefused fails unless err is a denial that names the home.
func wantHomeRefused(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: allowed", what)
	}
	if hostapi.CodeOf(err) != hostapi.CodeDenied {
		t.Fatalf("%s: %v (code %s), want denied", what, err, hostapi.CodeOf(err))
	}
	if !strings.Contains(err.Error(), "Astrid's home ($ASTRID_HOME") {
		t.Fatalf("%s: %q does not name the home as the reason", what, err)
	}
}

// TestHomeEscapesThroughTheHost runs every way into $ASTRID_HOME through
// the real gate and the host's file calls: by name, through symlinks that
// stay inside the workspace's os.Root, through a symlinked directory, a
// chain of links, "..", case, trailing slashes, absolute and /proc
// spellings, and hard links made before the capsule ran. Each is refused
// with the home as the reason and nothing in the home changes.
func TestHomeEscapesThroughTheHost(t *testing.T) {
	l := newHomeLayout(t)
	for _, grants := range []string{`"*"`, `"*", "home://", "/"`} {
		call := homeCall(t, l, l.home, grants)
		t.Run(grants, func(t *testing.T) {
			reads := []string{
				".astrid/secrets.key", ".astrid/config.toml", ".astrid/state.db", ".astrid/run/admin.token",
				".astrid/capsules/other/Capsule.toml", ".ASTRID/secrets.key", l.home + "/secrets.key",
				"key", "cfg", "dot/secrets.key", "chain1", "src/deep/up", "src/deep/updir/config.toml",
				"runlink/admin.token", "hardkey", "hardtoken",
			}
			if !strings.Contains(grants, "home://") {
				reads = append(reads, "home-like/escape/alice/diary")
			}
			for _, p := range reads {
				data, err := call.FSRead(p)
				if strings.Contains(string(data), "KEY-") {
					t.Fatalf("read %s: got the key", p)
				}
				wantHomeRefused(t, "read "+p, err)
				// Naming the file to an editor is refused alike, for a
				// read and for a write.
				for _, write := range []bool{false, true} {
					real, err := call.FSResolve(p, write)
					wantHomeRefused(t, fmt.Sprintf("resolve %s (write %v) to %q", p, write, real), err)
				}
			}
			for _, p := range []string{".astrid", ".astrid/", "dot", "dot/", "src/deep/updir", "runlink", l.home} {
				_, err := call.FSList(p)
				wantHomeRefused(t, "list "+p, err)
			}
			for _, p := range []string{".astrid/secrets.key", "key", "dot/config.toml", "chain1", "src/deep/up", "dot"} {
				_, err := call.FSStat(p)
				wantHomeRefused(t, "stat "+p, err)
			}
			for _, p := range []string{".astrid/secrets.key", "key", "cfg", "dot/new", "chain1", "src/deep/up", "src/deep/updir/planted", ".astrid/x"} {
				wantHomeRefused(t, "write "+p, call.FSWrite(p, []byte("pwned")))
			}
			for _, p := range []string{"dot/newdir", ".astrid/newdir", "src/deep/updir/newdir"} {
				wantHomeRefused(t, "mkdir "+p, call.FSMkdir(p))
			}
			for _, p := range []string{"dot/secrets.key", ".astrid/state.db", "src/deep/updir/config.toml"} {
				wantHomeRefused(t, "remove "+p, call.FSRemove(p))
			}
			for _, mv := range [][2]string{{"dot/secrets.key", "stolen"}, {"notes.md", "dot/notes.md"}, {"src/deep/updir/config.toml", "src/c"}, {".astrid/secrets.key", "k"}} {
				wantHomeRefused(t, "rename "+mv[0]+" "+mv[1], call.FSRename(mv[0], mv[1]))
			}
			// /proc/self/root and absolute links lead out of the os.Root:
			// refused, whatever the reason given.
			for _, p := range []string{"abs", "procroot/secrets.key"} {
				if data, err := call.FSRead(p); err == nil || hostapi.CodeOf(err) != hostapi.CodeDenied {
					t.Errorf("read %s: %q, %v", p, data, err)
				}
			}
			if strings.Contains(grants, `"/"`) {
				for _, p := range []string{"/proc/self/root" + l.home + "/secrets.key", l.ws + "/key", l.ws + "/dot/config.toml"} {
					if data, err := call.FSRead(p); err == nil || hostapi.CodeOf(err) != hostapi.CodeDenied {
						t.Errorf("read %s: %q, %v", p, data, err)
					}
				}
			}
			l.unchanged(t)
		})
	}
}

// The workspace stays what it was: its files, links within it and hard
// links between its own files are read and written; listing ~ shows
// .astrid (a listing of the workspace is not entering the home); home://
// reaches the principal's own home inside $ASTRID_HOME.
func TestHomeFenceControls(t *testing.T) {
	l := newHomeLayout(t)
	call := homeCall(t, l, l.home, `"*", "home://"`)
	for p, want := range map[string]string{"src/a.txt": "hello", "src/ok": "hello", "notes-link.md": "mine", "home://diary": "alice's diary", ".astrid/home/alice/diary": "alice's diary"} {
		if got, err := call.FSRead(p); err != nil || string(got) != want {
			t.Errorf("read %s: %q, %v", p, got, err)
		}
	}
	names, err := call.FSList(".")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range names {
		found = found || e.Name == ".astrid"
	}
	if !found {
		t.Error("the workspace's listing lacks .astrid")
	}
	if _, err := call.FSList("src/deep"); err != nil {
		t.Error(err)
	}
	if fi, err := call.FSStat("src/ok"); err != nil || fi.Size != 5 {
		t.Errorf("stat src/ok: %+v, %v", fi, err)
	}
	if fi, err := call.FSStat("src"); err != nil || !fi.IsDir {
		t.Errorf("stat src: %+v, %v", fi, err)
	}
	if _, err := call.FSStat("missing"); hostapi.CodeOf(err) != hostapi.CodeNotFound {
		t.Errorf("stat missing: %v", err)
	}
	if err := call.FSWrite("src/new.txt", []byte("new")); err != nil {
		t.Fatal(err)
	}
	if err := call.FSWrite("src/ok", []byte("through a link")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(l.ws, "src/a.txt")); string(b) != "through a link" {
		t.Errorf("src/a.txt = %q", b)
	}
	if err := call.FSWrite("top.txt", []byte("top")); err != nil {
		t.Fatal(err)
	}
	if err := call.FSMkdir("src/made"); err != nil {
		t.Fatal(err)
	}
	if err := call.FSRename("src/new.txt", "src/made/moved.txt"); err != nil {
		t.Fatal(err)
	}
	if err := call.FSRename("top.txt", "top2.txt"); err != nil {
		t.Fatal(err)
	}
	if err := call.FSRename("src/made/moved.txt", "moved.txt"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(l.ws, "moved.txt")); err != nil || string(b) != "new" {
		t.Errorf("moved.txt = %q, %v", b, err)
	}
	if err := call.FSRemove("moved.txt"); err != nil {
		t.Fatal(err)
	}
	if err := call.FSRemove("src/made"); err != nil {
		t.Fatal(err)
	}
	if err := call.FSWrite("home://diary", []byte("rewritten")); err != nil {
		t.Fatal(err)
	}
	if _, err := call.FSRead("missing"); hostapi.CodeOf(err) != hostapi.CodeNotFound {
		t.Errorf("read missing: %v", err)
	}
	noTempFiles(t, l.ws)
	noTempFiles(t, filepath.Join(l.ws, "src"))
}

// $ASTRID_HOME given through a symlink, or as the symlink's target while the
// workspace names it another way, is refused under both names.
func TestHomeThroughASymlink(t *testing.T) {
	l := newHomeLayout(t)
	other, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	homeLink := filepath.Join(other, "astrid-home")
	if err := os.Symlink(l.home, homeLink); err != nil {
		t.Fatal(err)
	}
	call := homeCall(t, l, homeLink, `"*", "/"`)
	for _, p := range []string{".astrid/secrets.key", "key", homeLink + "/secrets.key", l.home + "/config.toml"} {
		_, err := call.FSRead(p)
		wantHomeRefused(t, "read "+p, err)
	}
	if _, err := call.FSRead("src/a.txt"); err != nil {
		t.Error(err)
	}
	// The workspace itself reached through a symlink: the lexical check
	// sees another path, the check of what was opened does not.
	wsLink := filepath.Join(other, "ws")
	if err := os.Symlink(l.ws, wsLink); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	f.deps.Workspace, f.deps.HomesDir, f.deps.Home = wsLink, filepath.Join(l.home, "home"), l.home
	c := f.capsule(t, "[package]\nname = \"via-link\"\nversion = \"0.1.0\"\n[capabilities]\nfs_read = [\"*\"]\nfs_write = [\"*\"]\n")
	call2, _ := c.Begin(context.Background(), "alice")
	defer call2.End()
	for _, p := range []string{".astrid/secrets.key", wsLink + "/.astrid/config.toml", "key"} {
		_, err := call2.FSRead(p)
		wantHomeRefused(t, "read "+p, err)
	}
	wantHomeRefused(t, "write .astrid/x", call2.FSWrite(".astrid/x", []byte("x")))
	if _, err := call2.FSRead("notes.md"); err != nil {
		t.Error(err)
	}
	l.unchanged(t)
}

// A capsule whose install directory lies in the home reads it through
// cwd://, and nothing else of the home through the same grant.
func TestHomeInstallDirThroughCwd(t *testing.T) {
	l := newHomeLayout(t)
	f := newFixture(t)
	f.deps.Workspace, f.deps.HomesDir, f.deps.Home = l.ws, filepath.Join(l.home, "home"), l.home
	m := "[package]\nname = \"other\"\nversion = \"0.1.0\"\n[capabilities]\nfs_read = [\"cwd://\", \"*\"]\n"
	installDir := filepath.Join(l.home, "capsules", "other")
	if err := os.Symlink("../../secrets.key", filepath.Join(installDir, "key")); err != nil {
		t.Fatal(err)
	}
	c := capsuleIn(t, f, m, installDir)
	call, _ := c.Begin(context.Background(), "alice")
	defer call.End()
	if b, err := call.FSRead("cwd://Capsule.toml"); err != nil || !strings.Contains(string(b), "other") {
		t.Errorf("cwd://Capsule.toml: %q, %v", b, err)
	}
	if _, err := call.FSRead("cwd://key"); err == nil {
		t.Error("cwd://key read the store's key through a link out of the install directory")
	}
	_, err := call.FSRead(".astrid/secrets.key")
	wantHomeRefused(t, "read .astrid/secrets.key", err)
}

// capsuleIn is fixture.capsule with the install directory given.
func capsuleIn(t *testing.T, f fixture, toml, installDir string) *Capsule {
	t.Helper()
	m, diags := manifest.Parse([]byte(toml), "Capsule.toml", "")
	if err := diags.Err(false); err != nil {
		t.Fatal(err)
	}
	if err := f.deps.Dispatcher.Register(dispatch.CapsuleACL{ID: m.ID(), Publish: m.PublishPatterns(), Subscribe: m.SubscribePatterns()}, nopTarget{}); err != nil {
		t.Fatal(err)
	}
	c, err := NewCapsule(f.deps, m, installDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
