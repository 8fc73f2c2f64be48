package install

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A set installs every capsule or none: a failure at any capsule leaves
// the capsules directory and every approval record exactly as before,
// the replaced install's files included.
func TestASetIsInstalledAllOrNothing(t *testing.T) {
	for failAt := 0; failAt < 3; failAt++ {
		e := newEnv(t)
		// b is installed before, with fewer grants; the set replaces it.
		e.install(e.src("b", map[string]string{"Capsule.toml": manifestText("b"), "notes.md": "old b"}))
		oldRecord, _, err := e.st.Approvals().Get("b")
		if err != nil {
			t.Fatal(err)
		}
		srcs := [][]string{
			{e.src("a", map[string]string{"Capsule.toml": manifestText("a"), "notes.md": "new a"})},
			{e.src("b", map[string]string{"Capsule.toml": manifestText("b", "[capabilities]", `net = ["example.com:443"]`), "notes.md": "new b"})},
			{e.src("c", map[string]string{"Capsule.toml": manifestText("c"), "notes.md": "new c"})},
		}
		set, err := StageSet(e.opts, srcs...)
		if err != nil {
			t.Fatal(err)
		}
		set.beforePlace = func(i int) error {
			if i == failAt {
				return errors.New("disk full (injected)")
			}
			return nil
		}
		err = set.Commit(e.st)
		if err == nil || !strings.Contains(err.Error(), "nothing was installed") {
			t.Fatalf("fail at %d: %v, want an error saying nothing was installed", failAt, err)
		}
		for _, id := range []string{"a", "c"} {
			if _, lerr := os.Lstat(filepath.Join(e.caps, id)); !errors.Is(lerr, os.ErrNotExist) {
				t.Errorf("fail at %d: capsule %s is in place: %v", failAt, id, lerr)
			}
			if _, ok, _ := e.st.Approvals().Get(id); ok {
				t.Errorf("fail at %d: capsule %s stays approved", failAt, id)
			}
		}
		if got := read(t, filepath.Join(e.caps, "b", "notes.md")); got != "old b" {
			t.Errorf("fail at %d: b's files are %q, want the old install's", failAt, got)
		}
		if rec, _, _ := e.st.Approvals().Get("b"); !bytes.Equal(rec, oldRecord) {
			t.Errorf("fail at %d: b's approval record is not the one before", failAt)
		}
		if err := e.check("b"); err != nil {
			t.Errorf("fail at %d: the old b no longer loads: %v", failAt, err)
		}
		if h := e.hidden(); len(h) != 0 {
			t.Errorf("fail at %d: left behind: %v", failAt, h)
		}
	}

	// With no failure, all three are in, b replaced.
	e := newEnv(t)
	e.install(e.src("b", map[string]string{"Capsule.toml": manifestText("b"), "notes.md": "old b"}))
	set, err := StageSet(e.opts,
		[]string{e.src("a", map[string]string{"Capsule.toml": manifestText("a"), "notes.md": "new a"})},
		[]string{e.src("b", map[string]string{"Capsule.toml": manifestText("b"), "notes.md": "new b"})},
		[]string{e.src("c", map[string]string{"Capsule.toml": manifestText("c"), "notes.md": "new c"})})
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Commit(e.st); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		if got := read(t, filepath.Join(e.caps, id, "notes.md")); got != "new "+id {
			t.Errorf("%s: %q", id, got)
		}
		if err := e.check(id); err != nil {
			t.Errorf("%s is not approved: %v", id, err)
		}
	}
	if h := e.hidden(); len(h) != 0 {
		t.Errorf("left behind: %v", h)
	}
}

// A set refuses two sources of one capsule, and a set with a broken
// manifest installs none of the others; Abort leaves nothing.
func TestASetRefusesDuplicatesAndBrokenMembers(t *testing.T) {
	e := newEnv(t)
	a1 := e.src("a", map[string]string{"Capsule.toml": manifestText("a"), "notes.md": "1"})
	a2 := e.src("a", map[string]string{"Capsule.toml": manifestText("a"), "notes.md": "2"})
	if _, err := StageSet(e.opts, []string{a1}, []string{a2}); err == nil || !strings.Contains(err.Error(), "both capsule a") {
		t.Fatalf("duplicate: %v", err)
	}
	// Two members providing one tool: the runtime would load only one.
	b1 := e.src("b1", map[string]string{"Capsule.toml": manifestText("b1", tool("greet")), "notes.md": "x"})
	b2 := e.src("b2", map[string]string{"Capsule.toml": manifestText("b2", tool("greet")), "notes.md": "x"})
	if _, err := StageSet(e.opts, []string{b1}, []string{b2}); !errors.Is(err, ErrToolTaken) || !strings.Contains(err.Error(), "b1") || !strings.Contains(err.Error(), "both provide tool greet") {
		t.Fatalf("two members providing greet: %v", err)
	}
	broken := e.src("z", map[string]string{"Capsule.toml": "[package]\nname = \"z\"\nversion = \"nope\"\n"})
	set, err := StageSet(e.opts, []string{a1}, []string{broken})
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Commit(e.st); err == nil {
		t.Fatal("a set with a broken manifest was committed")
	}
	if _, err := os.Lstat(filepath.Join(e.caps, "a")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a was installed beside a broken member: %v", err)
	}
	if h := e.hidden(); len(h) != 0 {
		t.Errorf("left behind: %v", h)
	}
	// The lock is released: a plain install goes through.
	e.install(a1)
}
