package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzPolicyNeverReachesTheHome: whatever paths a policy names (an
// operator's [sandbox] read, a capsule's grants), resolving it never
// panics, never grants a rule inside the excluded home, and never grants
// the whole file system.
func FuzzPolicyNeverReachesTheHome(f *testing.F) {
	root := f.TempDir()
	ws := filepath.Join(root, "ws")
	home := filepath.Join(ws, ".astrid")
	for _, d := range []string{filepath.Join(home, "run"), filepath.Join(ws, "src", "deep"), filepath.Join(root, "other")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			f.Fatal(err)
		}
	}
	for name, target := range map[string]string{"link-home": home, "link-run": filepath.Join(home, "run"), "up": "..", "root": "/"} {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			f.Fatal(err)
		}
	}
	for _, seed := range []string{"", ".", "..", "src", ".astrid", ".astrid/run", "link-home", "link-run/x", "up/ws", "root", "src/../.astrid", "/", "//", "src//deep/", ".ASTRID"} {
		f.Add(seed, true)
		f.Add(seed, false)
	}
	f.Fuzz(func(t *testing.T, rel string, write bool) {
		if strings.IndexByte(rel, 0) >= 0 {
			return
		}
		path := rel
		if !filepath.IsAbs(path) {
			path = filepath.Join(ws, rel)
		}
		p := Policy{Exclude: []string{home}}
		if write {
			p.Write = []string{path}
		} else {
			p.Read = []string{path}
		}
		rules, _, err := p.resolve()
		if err != nil {
			return // refused: a relative path or the whole file system
		}
		for _, r := range rules {
			if r.path == "/" {
				t.Fatalf("%q granted the whole file system", rel)
			}
			if r.path == home || strings.HasPrefix(r.path, home+"/") {
				t.Fatalf("%q granted %s, inside the home", rel, r.path)
			}
			if r.access != accessList && strings.HasPrefix(home, r.path+"/") {
				t.Fatalf("%q granted %s, which holds the home, with more than listing", rel, r.path)
			}
		}
	})
}
