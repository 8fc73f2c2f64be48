package gate

import (
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/manifest"
)

// FuzzFSCheck: whatever grants and request it is given, an fs check that
// allows returns a Root whose Dir is the independently resolved directory of
// one of those grants, and whose Dir/Rel lies inside that Dir with no ".."
// anywhere; and a request holding a ".." component or a NUL is never allowed.
// With a home ($ASTRID_HOME inside the workspace, as when started from ~),
// nothing is allowed in it but through home:// or cwd://, whose roots carry
// no fence, and every other root is fenced by the home.
func FuzzFSCheck(f *testing.F) {
	seeds := [][4]string{
		{"*", "home://", "alice", "/workspace/src/main.go"},
		{"/workspace/src", "/tmp/exact.txt", "default", "/workspace/src/../../etc/passwd"},
		{"cwd:///etc", "home://notes", "bob", "cwd:///etc/hosts"},
		{"home://", "cwd://", "alice", "home://../bob/x"},
		{"/", "*", "x", "/etc/passwd"},
		{"cwd://../..", "/workspace-evil", "default", "/workspace-evil/x"},
		{"*", "", "alice", `..\..\etc`},
		{"home://a/b/", "/w/./x", "a-b_c", "home://a/b/c/"},
		{"*", "home://", "default", "%2e%2e/x"},
		{"*", "/", "default", ".astrid/secrets.key"},
		{"/home/user", "home://", "alice", "/home/user/.ASTRID/home/alice/x"},
		{"/home/user/.astrid", "cwd://", "x", "cwd://Capsule.toml"},
		{"*", "home://", "alice", ".astrid/home/alice/"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, grant1, grant2, principal, request string) {
		grants := []string{grant1, grant2}
		checkHomeFence(t, grants, principal, request)
		g, err := New(manifest.Capabilities{FSRead: grants}, fixture)
		if err != nil {
			t.Fatalf("New with a fixed, valid env: %v", err)
		}
		root, err := g.FSRead(principal, request)
		if err != nil {
			if root != (Root{}) {
				t.Fatalf("denial returned %+v", root)
			}
			return
		}
		if hasDotDot(request) || strings.ContainsRune(request, 0) {
			t.Fatalf("allowed %q, which has .. or NUL", request)
		}
		if !slices.Contains(grants, root.Grant) {
			t.Fatalf("Grant %q is not one of %q", root.Grant, grants)
		}
		want, ok := modelGrantDir(root.Grant, principal)
		if !ok || root.Dir != want {
			t.Fatalf("Dir %q for grant %q, model says %q (grants anything: %v)", root.Dir, root.Grant, want, ok)
		}
		if root.Rel == "" || strings.HasPrefix(root.Rel, "/") || hasDotDot(root.Rel) || path.Clean(root.Rel) != root.Rel {
			t.Fatalf("Rel %q is not a clean relative path", root.Rel)
		}
		full := path.Join(root.Dir, root.Rel)
		if full != root.Dir && root.Dir != "/" && !strings.HasPrefix(full, root.Dir+"/") {
			t.Fatalf("%q lies outside %q", full, root.Dir)
		}
		if !strings.HasPrefix(root.Dir+"/", strings.TrimSuffix(root.Base, "/")+"/") {
			t.Fatalf("Dir %q is not inside Base %q", root.Dir, root.Base)
		}
		if strings.HasPrefix(request, "/") && full != strings.TrimSuffix(request, "/") && request != "/" {
			t.Fatalf("absolute request %q landed on %q", request, full)
		}
	})
}

// checkHomeFence is FuzzFSCheck's home half: the same grants and request
// against the default layout started from ~.
func checkHomeFence(t *testing.T, grants []string, principal, request string) {
	g, err := New(manifest.Capabilities{FSRead: grants}, homeFixture)
	if err != nil {
		return // `*` needs no more than the fixture has: only env errors land here
	}
	root, err := g.FSRead(principal, request)
	if err != nil {
		if root != (Root{}) {
			t.Fatalf("denial returned %+v", root)
		}
		return
	}
	scheme := strings.HasPrefix(root.Grant, "home://") || strings.HasPrefix(root.Grant, "cwd://")
	full := path.Join(root.Dir, root.Rel)
	inHome := len(full) >= len(homeFixture.Home) && strings.EqualFold(full[:len(homeFixture.Home)], homeFixture.Home) &&
		(len(full) == len(homeFixture.Home) || full[len(homeFixture.Home)] == '/')
	switch {
	case inHome && !scheme:
		t.Fatalf("%q allowed in the home through %q", request, root.Grant)
	case scheme && root.Fence() != nil:
		t.Fatalf("%q: a %s root carries a fence", request, root.Grant)
	case !scheme && !slices.Contains(root.Fence(), homeFixture.Home):
		t.Fatalf("%q: root of %q has fence %q", request, root.Grant, root.Fence())
	}
}

var principalRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// modelGrantDir resolves a grant the simple way, independently of the gate:
// a grant with a ".." (or a NUL, or a backslash) grants nothing; scheme rests
// lose leading slashes and are joined under their base.
func modelGrantDir(grant, principal string) (string, bool) {
	if hasDotDot(grant) || strings.ContainsAny(grant, "\x00\\") {
		return "", false
	}
	switch {
	case grant == "*":
		return fixture.Workspace, true
	case strings.HasPrefix(grant, "cwd://"):
		return path.Join(fixture.InstallDir, strings.TrimPrefix(grant, "cwd://")), true
	case strings.HasPrefix(grant, "home://"):
		if !principalRE.MatchString(principal) {
			return "", false
		}
		return path.Join(fixture.HomesDir, principal, strings.TrimPrefix(grant, "home://")), true
	case strings.HasPrefix(grant, "/"):
		return path.Clean(grant), true
	}
	return "", false
}

func hasDotDot(p string) bool {
	return slices.Contains(strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }), "..")
}
