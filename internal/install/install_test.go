package install

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/astrid-go/astrid/internal/grants"
	"github.com/astrid-go/astrid/internal/runtime"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/manifest"
	"github.com/astrid-go/astrid/sdk"
)

type env struct {
	t    *testing.T
	opts Options
	st   *store.Store
	caps string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	home := t.TempDir()
	st, err := store.Open(filepath.Join(home, "state.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return &env{t: t, st: st, caps: filepath.Join(home, "capsules"),
		opts: Options{Home: home, Reserved: map[string]string{"fs": "a built-in capsule", "kernel": "the kernel"}}}
}

func manifestText(name string, extra ...string) string {
	return fmt.Sprintf("[package]\nname = %q\nversion = \"0.1.0\"\n[[context_file]]\nname = \"notes\"\nfile = \"notes.md\"\n", name) + strings.Join(extra, "\n") + "\n"
}

// src writes a capsule source directory named dir under a fresh temp dir.
func (e *env) src(dir string, files map[string]string) string {
	e.t.Helper()
	root := filepath.Join(e.t.TempDir(), dir)
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			e.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			e.t.Fatal(err)
		}
	}
	return root
}

func (e *env) install(src ...string) *Staged {
	e.t.Helper()
	s, err := Stage(e.opts, src...)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := s.Commit(e.st); err != nil {
		e.t.Fatal(err)
	}
	return s
}

// hidden lists the hidden entries of the capsules directory besides the
// lock file.
func (e *env) hidden() []string {
	e.t.Helper()
	entries, err := os.ReadDir(e.caps)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, en := range entries {
		if strings.HasPrefix(en.Name(), ".") && en.Name() != lockName {
			out = append(out, en.Name())
		}
	}
	return out
}

func (e *env) check(id string) error {
	e.t.Helper()
	c, err := Find(e.opts, id)
	if err != nil {
		return err
	}
	return grants.Check(grants.NewBook(e.st), c.Manifest)
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestInstallStagesChecksThenPlacesAndApproves(t *testing.T) {
	e := newEnv(t)
	src := e.src("notes", map[string]string{"Capsule.toml": manifestText("notes"), "notes.md": "hello", "sub/x.txt": "x"})
	s, err := Stage(e.opts, src)
	if err != nil {
		t.Fatal(err)
	}
	if s.Manifest.ID() != "notes" || s.Target != filepath.Join(e.caps, "notes") || s.Replaces {
		t.Fatalf("staged %+v", s)
	}
	// Staged is neither installed nor approved, nor visible to the runtime.
	if _, err := os.Lstat(s.Target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the target exists before Commit: %v", err)
	}
	if cands, problems, _ := runtime.Discover(nil, e.caps); len(cands)+len(problems) != 0 {
		t.Errorf("the runtime sees the staging directory: %v %v", cands, problems)
	}
	if err := s.Commit(e.st); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(e.caps, "notes", "sub", "x.txt")); got != "x" {
		t.Errorf("sub/x.txt = %q", got)
	}
	if err := e.check("notes"); err != nil {
		t.Errorf("the installed capsule is not approved: %v", err)
	}
	if h := e.hidden(); len(h) != 0 {
		t.Errorf("left behind: %v", h)
	}
	if err := s.Commit(e.st); err == nil {
		t.Error("a second Commit succeeded")
	}
}

func TestReinstallSwapsTheDirectoryAndDeletesTheOld(t *testing.T) {
	e := newEnv(t)
	e.install(e.src("notes", map[string]string{"Capsule.toml": manifestText("notes", "[capabilities]", `fs_read = ["cwd://"]`), "notes.md": "v1", "old.md": "gone soon"}))
	before, _ := os.Stat(filepath.Join(e.caps, "notes"))
	s := e.install(e.src("notes", map[string]string{"Capsule.toml": manifestText("notes"), "notes.md": "v2"}))
	if !s.Replaces {
		t.Error("Replaces = false for a reinstall")
	}
	after, _ := os.Stat(filepath.Join(e.caps, "notes"))
	if os.SameFile(before, after) {
		t.Error("the reinstall wrote into the old directory instead of replacing it")
	}
	if got := read(t, filepath.Join(e.caps, "notes", "notes.md")); got != "v2" {
		t.Errorf("notes.md = %q, want v2", got)
	}
	if _, err := os.Stat(filepath.Join(e.caps, "notes", "old.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file of the old install survived: %v", err)
	}
	if h := e.hidden(); len(h) != 0 {
		t.Errorf("the old install was not deleted: %v", h)
	}
	// The record is the new manifest's: asking for the old, wider grant
	// again is refused.
	if err := os.WriteFile(filepath.Join(e.caps, "notes", manifest.FileName), []byte(manifestText("notes", "[capabilities]", `fs_read = ["cwd://"]`)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := e.check("notes"); !errors.Is(err, grants.ErrWidened) {
		t.Errorf("check after narrowing reinstall = %v, want ErrWidened", err)
	}
}

// A crash mid-install leaves a staging directory (and maybe an old
// install being deleted) behind: the runtime ignores both, the installed
// capsule still loads, and the next install deletes them.
func TestACrashedInstallLeavesTheOldOneLoadingAndIsCleanedNextTime(t *testing.T) {
	e := newEnv(t)
	e.install(e.src("notes", map[string]string{"Capsule.toml": manifestText("notes"), "notes.md": "v1"}))
	// What a crash leaves: a process that staged a reinstall asking for
	// more dies (its flock goes with it) before Commit; another died while
	// deleting an old install it had renamed aside.
	crashed, err := Stage(e.opts, e.src("notes", map[string]string{"Capsule.toml": manifestText("notes", "[capabilities]", `fs_read = ["/"]`), "notes.md": "v2"}))
	if err != nil {
		t.Fatal(err)
	}
	crashed.lock.unlock() // the process is gone: no Commit, no Abort
	if err := os.MkdirAll(filepath.Join(e.caps, ".remove-456", "capsule"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.caps, ".remove-456", "capsule", manifest.FileName), []byte(manifestText("old")), 0o600); err != nil {
		t.Fatal(err)
	}
	if h := e.hidden(); len(h) != 2 {
		t.Fatalf("the crash left %v, want a staging and a removal directory", h)
	}
	cands, problems, err := runtime.Discover(nil, e.caps)
	if err != nil || len(cands) != 1 || cands[0].Dir != filepath.Join(e.caps, "notes") || len(problems) != 0 {
		t.Fatalf("discovered %v %v %v, want only the installed notes", cands, problems, err)
	}
	if err := e.check("notes"); err != nil {
		t.Errorf("the old install does not load: %v", err)
	}
	s, err := Stage(e.opts, e.src("other", map[string]string{"Capsule.toml": manifestText("other"), "notes.md": "o"}))
	if err != nil {
		t.Fatal(err)
	}
	s.Abort()
	if h := e.hidden(); len(h) != 0 {
		t.Errorf("the next install left %v", h)
	}
	if got := read(t, filepath.Join(e.caps, "notes", "notes.md")); got != "v1" {
		t.Errorf("the installed capsule changed: %q", got)
	}
}

func TestAbortKeepsTheInstalledCapsule(t *testing.T) {
	e := newEnv(t)
	e.install(e.src("notes", map[string]string{"Capsule.toml": manifestText("notes"), "notes.md": "v1"}))
	s, err := Stage(e.opts, e.src("notes", map[string]string{"Capsule.toml": manifestText("notes", "[capabilities]", `net = ["*"]`), "notes.md": "v2"}))
	if err != nil {
		t.Fatal(err)
	}
	s.Abort()
	if got := read(t, filepath.Join(e.caps, "notes", "notes.md")); got != "v1" {
		t.Errorf("notes.md = %q after an aborted reinstall", got)
	}
	if err := e.check("notes"); err != nil {
		t.Errorf("the approval changed with an aborted reinstall: %v", err)
	}
	if h := e.hidden(); len(h) != 0 {
		t.Errorf("left behind: %v", h)
	}
}

// Installs an attacker (or a mistake) might try; none writes anything
// outside the capsules directory, installs anything, or approves anything.
func TestInstallRefusesHostileSources(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		setup func(e *env) []string
		want  string
		is    error
	}{
		{"symlink out of the capsule", func(e *env) []string {
			src := e.src("notes", map[string]string{"Capsule.toml": manifestText("notes"), "notes.md": "n"})
			must(t, os.Symlink(outside, filepath.Join(src, "data")))
			return []string{src}
		}, "leads out of the capsule directory", nil},
		{"symlink to the parent", func(e *env) []string {
			src := e.src("notes", map[string]string{"Capsule.toml": manifestText("notes"), "notes.md": "n"})
			must(t, os.Symlink("..", filepath.Join(src, "up")))
			return []string{src}
		}, "leads out", nil},
		{"link through a link", func(e *env) []string {
			src := e.src("notes", map[string]string{"Capsule.toml": manifestText("notes"), "notes.md": "n", "a/b/f": "f"})
			must(t, os.Symlink("..", filepath.Join(src, "a", "up")))     // a/up -> capsule root: inside
			must(t, os.Symlink("a/up/..", filepath.Join(src, "escape"))) // lexically "." but really the parent
			return []string{src}
		}, "leads out", nil},
		{"manifest is a symlink to elsewhere", func(e *env) []string {
			src := e.src("notes", map[string]string{"notes.md": "n"})
			real := filepath.Join(outside, "Capsule.toml")
			must(t, os.WriteFile(real, []byte(manifestText("notes")), 0o600))
			must(t, os.Symlink(real, filepath.Join(src, manifest.FileName)))
			return []string{src}
		}, "holds no Capsule.toml", nil},
		{"dangling symlink", func(e *env) []string {
			src := e.src("notes", map[string]string{"Capsule.toml": manifestText("notes"), "notes.md": "n"})
			must(t, os.Symlink("nowhere", filepath.Join(src, "gone")))
			return []string{src}
		}, "does not exist", nil},
		{"a FIFO", func(e *env) []string {
			src := e.src("notes", map[string]string{"Capsule.toml": manifestText("notes"), "notes.md": "n"})
			must(t, syscall.Mkfifo(filepath.Join(src, "pipe"), 0o600))
			return []string{src}
		}, "not a regular file", nil},
		{"over a built-in", func(e *env) []string {
			return []string{e.src("my-fs", map[string]string{"Capsule.toml": manifestText("fs"), "notes.md": "n"})}
		}, "fs is a built-in capsule", ErrReserved},
		{"the astrid home itself", func(e *env) []string {
			must(t, os.MkdirAll(e.caps, 0o700))
			must(t, os.WriteFile(filepath.Join(e.opts.Home, manifest.FileName), []byte(manifestText("home")), 0o600))
			must(t, os.WriteFile(filepath.Join(e.opts.Home, "notes.md"), []byte("n"), 0o600))
			return []string{e.opts.Home}
		}, "holds the capsules directory", nil},
		{"too big", func(e *env) []string {
			e.opts.MaxBytes = 100
			return []string{e.src("notes", map[string]string{"Capsule.toml": manifestText("notes"), "notes.md": strings.Repeat("x", 200)})}
		}, "more than 100 bytes", nil},
		{"not a capsule", func(e *env) []string { return []string{e.src("empty", map[string]string{"README": "r"})} }, "holds no Capsule.toml", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			args := tc.setup(e)
			s, err := Stage(e.opts, args...)
			if err == nil {
				s.Abort()
				t.Fatalf("Stage succeeded, want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Fatalf("Stage = %v, want %q", err, tc.want)
			}
			if h := e.hidden(); len(h) != 0 {
				t.Errorf("left behind: %v", h)
			}
			if cands, _, _ := runtime.Discover(nil, e.caps); len(cands) != 0 {
				t.Errorf("installed: %v", cands)
			}
			if got := read(t, filepath.Join(outside, "secret")); got != "s" {
				t.Errorf("a file outside changed: %q", got)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A manifest with errors (an id that is a path, say) is staged so that
// its diagnostics can be shown, and Commit refuses it.
func TestCommitRefusesAManifestWithErrors(t *testing.T) {
	e := newEnv(t)
	s, err := Stage(e.opts, e.src("evil", map[string]string{"Capsule.toml": manifestText("../evil"), "notes.md": "n"}))
	if err != nil {
		t.Fatal(err)
	}
	if s.Diagnostics.Err(false) == nil {
		t.Fatal("no error diagnostics for name = \"../evil\"")
	}
	if err := s.Commit(e.st); err == nil || !strings.Contains(err.Error(), "has errors") {
		t.Fatalf("Commit = %v, want a refusal", err)
	}
	if entries, _ := os.ReadDir(e.caps); len(entries) != 1 {
		t.Errorf("capsules/ holds %v, want only the lock file", entries)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(e.caps), "evil")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("something was written beside capsules/: %v", err)
	}
}

// The capsule's name, not the source directory's, decides where it goes.
func TestInstallGoesWhereTheManifestNameSays(t *testing.T) {
	e := newEnv(t)
	s := e.install(e.src("foo", map[string]string{"Capsule.toml": manifestText("bar"), "notes.md": "n"}))
	if s.Target != filepath.Join(e.caps, "bar") {
		t.Errorf("Target = %s", s.Target)
	}
	if _, err := os.Stat(filepath.Join(e.caps, "foo")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("capsules/foo exists: %v", err)
	}
	// Renaming the package on disk afterwards does not carry the approval
	// over to the new name.
	must(t, os.WriteFile(filepath.Join(e.caps, "bar", manifest.FileName), []byte(manifestText("baz")), 0o600))
	if err := e.check("baz"); !errors.Is(err, grants.ErrNotApproved) {
		t.Errorf("renamed on disk: %v, want ErrNotApproved", err)
	}
}

// A symlink planted at capsules/<id> is replaced, never written through.
func TestInstallReplacesAPlantedSymlinkWithoutWritingThroughIt(t *testing.T) {
	e := newEnv(t)
	victim := t.TempDir()
	must(t, os.WriteFile(filepath.Join(victim, "keep"), []byte("k"), 0o600))
	must(t, os.MkdirAll(e.caps, 0o700))
	must(t, os.Symlink(victim, filepath.Join(e.caps, "notes")))
	e.install(e.src("notes", map[string]string{"Capsule.toml": manifestText("notes"), "notes.md": "n"}))
	fi, err := os.Lstat(filepath.Join(e.caps, "notes"))
	if err != nil || !fi.IsDir() {
		t.Fatalf("capsules/notes is %v, %v; want a directory", fi, err)
	}
	entries, _ := os.ReadDir(victim)
	if len(entries) != 1 || read(t, filepath.Join(victim, "keep")) != "k" {
		t.Errorf("the symlink's target changed: %v", entries)
	}
}

// A wasm capsule given as its module and manifest: the module is checked
// against meta.json's hash, as the loader does.
func TestInstallWasmAndManifestChecksIntegrity(t *testing.T) {
	module := "\x00asm\x01\x00\x00\x00"
	sum := sha256.Sum256([]byte(module))
	hash := "sha256:" + hex.EncodeToString(sum[:])
	text := "[package]\nname = \"mod\"\nversion = \"0.1.0\"\n[[component]]\nid = \"mod\"\nfile = \"bin/mod.wasm\"\ntype = \"executable\"\n"
	for _, tc := range []struct {
		name, meta, want string
	}{
		{"vouched", hash, ""},
		{"tampered", "sha256:" + strings.Repeat("0", 64), "integrity check failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			build := e.src("build", map[string]string{"mod.wasm": module, "meta.json": `{"wasm_hash":"` + tc.meta + `","abi_version":1}`})
			toml := e.src("srcdir", map[string]string{"Capsule.toml": text})
			s, err := Stage(e.opts, filepath.Join(build, "mod.wasm"), filepath.Join(toml, "Capsule.toml"))
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Stage = %v, want %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Commit(e.st); err != nil {
				t.Fatal(err)
			}
			if got := read(t, filepath.Join(e.caps, "mod", "bin", "mod.wasm")); got != module {
				t.Error("the module was not placed where the manifest names it")
			}
		})
	}
	// A file that is vouched for but is not WebAssembly: refused at
	// install, never reported installed to fail at load.
	t.Run("not wasm", func(t *testing.T) {
		e := newEnv(t)
		text := "#!/bin/sh\nrm -rf /\n"
		sum := sha256.Sum256([]byte(text))
		build := e.src("build", map[string]string{"mod.wasm": text, "meta.json": `{"wasm_hash":"sha256:` + hex.EncodeToString(sum[:]) + `","abi_version":1}`})
		toml := e.src("srcdir", map[string]string{"Capsule.toml": "[package]\nname = \"mod\"\nversion = \"0.1.0\"\n[[component]]\nid = \"mod\"\nfile = \"bin/mod.wasm\"\ntype = \"executable\"\n"})
		_, err := Stage(e.opts, filepath.Join(build, "mod.wasm"), filepath.Join(toml, "Capsule.toml"))
		if err == nil || !strings.Contains(err.Error(), "is not WebAssembly") {
			t.Fatalf("Stage of a shell script as mod.wasm = %v, want it refused as not WebAssembly", err)
		}
		if cands, _, _ := runtime.Discover(nil, e.caps); len(cands) != 0 {
			t.Errorf("a refused install left %d capsules", len(cands))
		}
	})
	e := newEnv(t)
	dir := e.src("nomod", map[string]string{"Capsule.toml": text, "meta.json": `{"wasm_hash":"` + hash + `"}`})
	if _, err := Stage(e.opts, dir); err == nil || !strings.Contains(err.Error(), "astrid capsule build") {
		t.Errorf("Stage without the module = %v, want a hint to build it", err)
	}
}

func TestRemove(t *testing.T) {
	e := newEnv(t)
	e.install(e.src("notes", map[string]string{"Capsule.toml": manifestText("notes"), "notes.md": "n"}))
	e.install(e.src("other", map[string]string{"Capsule.toml": manifestText("other"), "notes.md": "n"}))
	for _, id := range []string{"notes", "other"} {
		must(t, e.st.KV("alice", id).Set("k", []byte("v")))
		must(t, e.st.Secrets(id).Set("KEY", []byte("s")))
	}
	got, err := Remove(e.opts, e.st, "notes", false)
	if err != nil || len(got.Dirs) != 1 || got.Purged {
		t.Fatalf("Remove = %+v, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(e.caps, "notes")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("capsules/notes survived: %v", err)
	}
	if _, ok, _ := grants.NewBook(e.st).Approved("notes"); ok {
		t.Error("the approval survived the remove")
	}
	if _, ok, _ := e.st.KV("alice", "notes").Get("k"); !ok {
		t.Error("KV deleted without --purge")
	}
	// Purging what is left (the files are gone, the state is not).
	if got, err := Remove(e.opts, e.st, "notes", true); err != nil || !got.Purged {
		t.Fatalf("Remove --purge = %+v, %v", got, err)
	}
	if _, ok, _ := e.st.KV("alice", "notes").Get("k"); ok {
		t.Error("KV survived --purge")
	}
	if keys, _ := e.st.Secrets("notes").List(); len(keys) != 0 {
		t.Errorf("secrets survived --purge: %v", keys)
	}
	if _, ok, _ := e.st.KV("alice", "other").Get("k"); !ok {
		t.Error("purging notes deleted other's KV")
	}
	if err := e.check("other"); err != nil {
		t.Errorf("other after removing notes: %v", err)
	}
	if _, err := Remove(e.opts, e.st, "notes", false); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("removing it again = %v, want ErrNotInstalled", err)
	}
	if h := e.hidden(); len(h) != 0 {
		t.Errorf("left behind: %v", h)
	}
}

func TestRemoveRefusesBuiltinsAndPaths(t *testing.T) {
	e := newEnv(t)
	victim := t.TempDir()
	must(t, os.WriteFile(filepath.Join(victim, "keep"), []byte("k"), 0o600))
	for _, tc := range []struct {
		id   string
		want string
	}{
		{"fs", "cannot be removed"},
		{"kernel", "reserved"},
		{"..", "may use only"},
		{"../capsules", "may use only"},
		{"", "must not be empty"},
		{victim, "may use only"},
	} {
		if _, err := Remove(e.opts, e.st, tc.id, true); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Remove(%q) = %v, want %q", tc.id, err, tc.want)
		}
		if _, err := Find(e.opts, tc.id); err == nil {
			t.Errorf("Find(%q) succeeded", tc.id)
		}
	}
	if read(t, filepath.Join(victim, "keep")) != "k" {
		t.Error("the victim changed")
	}
}

// Removing a capsule installed as a symlink removes the link, not what it
// points to.
func TestRemoveOfASymlinkedInstallKeepsItsTarget(t *testing.T) {
	e := newEnv(t)
	elsewhere := e.src("notes", map[string]string{"Capsule.toml": manifestText("notes"), "notes.md": "n"})
	must(t, os.MkdirAll(e.caps, 0o700))
	must(t, os.Symlink(elsewhere, filepath.Join(e.caps, "notes")))
	if _, err := Remove(e.opts, e.st, "notes", false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(e.caps, "notes")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the link survived: %v", err)
	}
	if read(t, filepath.Join(elsewhere, "notes.md")) != "n" {
		t.Error("the link's target was deleted")
	}
}

func TestOneInstallAtATime(t *testing.T) {
	e := newEnv(t)
	must(t, os.MkdirAll(e.caps, 0o700))
	held, err := lockDir(e.caps, DefaultLockWait)
	if err != nil {
		t.Fatal(err)
	}
	e.opts.LockWait = 1 // a nanosecond: one try
	src := e.src("notes", map[string]string{"Capsule.toml": manifestText("notes"), "notes.md": "n"})
	if _, err := Stage(e.opts, src); !errors.Is(err, ErrBusy) {
		t.Errorf("Stage while locked = %v, want ErrBusy", err)
	}
	if _, err := Remove(e.opts, e.st, "notes", false); !errors.Is(err, ErrBusy) {
		t.Errorf("Remove while locked = %v, want ErrBusy", err)
	}
	held.unlock()
	e.install(src)
}

// tool is the manifest text of a capsule providing tool name.
func tool(name string) string {
	return fmt.Sprintf("[[tool]]\nname = %q\ndescription_for_llm = \"x\"\n[subscribe]\n\"tool.v1.execute.%s\" = { wit = \"opaque\", handler = \"run\" }\n", name, name)
}

// A capsule declaring a tool that a built-in or another installed capsule
// provides is refused at install, naming the provider: the runtime would
// refuse it at load, after install had said "installed".
func TestInstallRefusesATakenTool(t *testing.T) {
	e := newEnv(t)
	e.opts.Builtins = []runtime.Builtin{{Manifest: []byte("[package]\nname = \"fs\"\nversion = \"0.1.0\"\n" + tool("read_file")), New: func() *sdk.Capsule { return nil }}}
	e.install(e.src("first", map[string]string{"Capsule.toml": manifestText("first", tool("greet")), "notes.md": "x"}))
	for _, tc := range []struct {
		name, id, tool, want string
	}{
		{"a built-in's", "mine", "read_file", "tool read_file is provided by built-in capsule fs"},
		{"an installed capsule's", "second", "greet", "tool greet is provided by capsule first"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Stage(e.opts, e.src(tc.id, map[string]string{"Capsule.toml": manifestText(tc.id, tool(tc.tool)), "notes.md": "x"}))
			if !errors.Is(err, ErrToolTaken) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Stage = %v, want ErrToolTaken naming %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(e.caps, tc.id)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the refused capsule was placed: %v", err)
			}
		})
	}
	// Reinstalling the provider itself, or a capsule with a free tool, is fine.
	e.install(e.src("first", map[string]string{"Capsule.toml": manifestText("first", tool("greet")), "notes.md": "y"}))
	e.install(e.src("third", map[string]string{"Capsule.toml": manifestText("third", tool("wave")), "notes.md": "x"}))
}

// A capsule of several components is installed from its directory: the
// two-file form (one .wasm and its Capsule.toml) would leave the others
// behind, so it is refused saying what to give instead.
func TestWasmAndManifestRefusesSeveralComponents(t *testing.T) {
	e := newEnv(t)
	dir := e.src("multi", map[string]string{
		"Capsule.toml": "[package]\nname = \"multi\"\nversion = \"0.1.0\"\n[[component]]\nid = \"app\"\nfile = \"app.wasm\"\nlink = [\"lib\"]\n[[component]]\nid = \"lib\"\nfile = \"lib.wasm\"\ntype = \"library\"\n",
		"app.wasm":     "\x00asm\x01\x00\x00\x00",
		"lib.wasm":     "\x00asm\x01\x00\x00\x00",
	})
	_, err := Stage(e.opts, filepath.Join(dir, "app.wasm"), filepath.Join(dir, "Capsule.toml"))
	if err == nil || !strings.Contains(err.Error(), "declares 2 [[component]]s; install the capsule's directory") {
		t.Fatalf("two-file install of a two-component capsule: %v", err)
	}
}
