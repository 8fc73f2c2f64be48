package gate

import (
	"path/filepath"
	"testing"

	"github.com/astrid-go/astrid/manifest"
)

type fsCase struct {
	name      string
	read      []string // fs_read grants
	write     []string // fs_write grants
	writing   bool     // check FSWrite instead of FSRead
	principal string   // "" means "default"
	path      string
	want      Root // zero means denied
}

func runFS(t *testing.T, env Env, cases []fsCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, err := New(manifest.Capabilities{FSRead: tc.read, FSWrite: tc.write}, env)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			principal := tc.principal
			if principal == "" {
				principal = "default"
			}
			check, capability := g.FSRead, "fs_read"
			if tc.writing {
				check, capability = g.FSWrite, "fs_write"
			}
			got, err := check(principal, tc.path)
			if tc.want == (Root{}) {
				wantDenied(t, err, capability)
				if got != (Root{}) {
					t.Errorf("denial returned root %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("denied: %v", err)
			}
			if got != tc.want {
				t.Errorf("root = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestFSUpstream re-runs upstream's gate tests (spec/manifest-engines.md
// §2.10) with this runtime's meaning of the schemes. Skipped as written:
// test 3 (test_scheme_resolution_workspace), 11 (test_scheme_resolution_both)
// and 12 (test_global_path_denied_without_manifest_entry) treat cwd:// as
// the workspace, and 4 (logical_workspace_gate_never_consults_a_host_path)
// needs a logical workspace:// namespace this runtime does not have; each is
// kept below in its cwd:// = install directory form.
func TestFSUpstream(t *testing.T) {
	const alice = "/home/user/.astrid/home/alice"
	install := fixture.InstallDir
	src := Root{Grant: "/workspace/src", Dir: "/workspace/src", Base: "/workspace/src"}
	ws := Root{Grant: "*", Dir: "/workspace", Base: "/workspace"}
	home := func(principal, rel string) Root {
		dir := "/home/user/.astrid/home/" + principal
		return Root{Grant: "home://", Dir: dir, Rel: rel, Base: dir}
	}
	cwd := func(rel string) Root { return Root{Grant: "cwd://", Dir: install, Rel: rel, Base: install} }
	with := func(r Root, rel string) Root { r.Rel = rel; return r }
	read := []string{"/workspace/src", "/tmp/exact.txt"}
	runFS(t, fixture, []fsCase{
		// 2. test_manifest_security_gate_fs
		{name: "2/read under literal", read: read, path: "/workspace/src/main.rs", want: with(src, "main.rs")},
		{name: "2/read exact file grant", read: read, path: "/tmp/exact.txt", want: Root{Grant: "/tmp/exact.txt", Dir: "/tmp/exact.txt", Rel: ".", Base: "/tmp/exact.txt"}},
		{name: "2/src-evil", read: read, path: "/workspace/src-evil/main.rs"},
		{name: "2/src_evil", read: read, path: "/workspace/src_evil/main.rs"},
		{name: "2/literal itself", read: read, path: "/workspace/src", want: with(src, ".")},
		{name: "2/wildcard write inside", write: []string{"*"}, writing: true, path: "/workspace/out/file.txt", want: with(ws, "out/file.txt")},
		{name: "2/wildcard write /etc/passwd", write: []string{"*"}, writing: true, path: "/etc/passwd"},
		{name: "2/wildcard write /random", write: []string{"*"}, writing: true, path: "/random/file.txt"},
		{name: "2/traversal out of literal", read: read, path: "/workspace/src/../../etc/passwd"},
		// 3 (adapted). cwd:// is the install directory.
		{name: "3/cwd allows install", read: []string{"cwd://"}, path: install + "/src/main.rs", want: cwd("src/main.rs")},
		{name: "3/cwd is not the workspace", read: []string{"cwd://"}, path: "/workspace/src/main.rs"},
		{name: "3/cwd denies other", read: []string{"cwd://"}, path: "/other/path"},
		// 4 (adapted). workspace:// is an unknown scheme, as request and as grant.
		{name: "4/workspace scheme request", read: []string{"*"}, path: "workspace://src/main.rs"},
		{name: "4/workspace scheme grant", read: []string{"workspace://src"}, path: "/workspace/src/main.rs"},
		// 5. test_scheme_resolution_home_default_root
		{name: "5/home allows own home", read: []string{"home://"}, path: "/home/user/.astrid/home/default/notes.md", want: home("default", "notes.md")},
		{name: "5/home denies workspace", read: []string{"home://"}, path: "/workspace/src/main.rs"},
		// 6. test_scheme_resolution_home_principal_override
		{name: "6/alice reads hers", read: []string{"home://"}, principal: "alice", path: alice + "/file.txt", want: home("alice", "file.txt")},
		{name: "6/alice denied default's", read: []string{"home://"}, principal: "alice", path: "/home/user/.astrid/home/default/file.txt"},
		{name: "6/alice denied the Astrid home", read: []string{"home://"}, principal: "alice", path: "/home/user/.astrid/file.txt"},
		// 7. test_home_cross_principal_denied
		{name: "7/bob's file", read: []string{"home://"}, principal: "alice", path: "/home/user/.astrid/home/bob/secret.txt"},
		// 8. test_home_traversal_denied
		{name: "8/alice/../bob", read: []string{"home://"}, principal: "alice", path: alice + "/../bob/secret.txt"},
		// 10. test_logical_home_namespace_does_not_require_a_host_root
		{name: "10/read home://notes/today", read: []string{"home://notes"}, path: "home://notes/today", want: Root{Grant: "home://notes", Dir: "/home/user/.astrid/home/default/notes", Rel: "today", Base: "/home/user/.astrid/home/default"}},
		{name: "10/write home://notes/today", write: []string{"home://notes"}, writing: true, path: "home://notes/today", want: Root{Grant: "home://notes", Dir: "/home/user/.astrid/home/default/notes", Rel: "today", Base: "/home/user/.astrid/home/default"}},
		{name: "10/home://other", read: []string{"home://notes"}, path: "home://other/today"},
		{name: "10/home://notes/../other", read: []string{"home://notes"}, path: "home://notes/../other"},
		{name: "10/home://notes//today", read: []string{"home://notes"}, path: "home://notes//today"},
		// 11 (adapted). test_scheme_resolution_both
		{name: "11/install", read: []string{"cwd://", "home://"}, path: install + "/x", want: cwd("x")},
		{name: "11/home", read: []string{"cwd://", "home://"}, path: "/home/user/.astrid/home/default/x", want: home("default", "x")},
		{name: "11/etc", read: []string{"cwd://", "home://"}, path: "/etc/passwd"},
		// 12 (adapted). test_global_path_denied_without_manifest_entry
		{name: "12/home without home grant", read: []string{"cwd://"}, path: "/home/user/.astrid/home/default/x"},
		{name: "12/install with cwd grant", read: []string{"cwd://"}, path: install + "/x", want: cwd("x")},
	})
}

// TestFSHomeWithoutRoot is upstream test 9: a home:// grant with no home
// directory configured grants nothing. Here that is the host's error.
func TestFSHomeWithoutRoot(t *testing.T) {
	env := fixture
	env.HomesDir = ""
	if _, err := New(manifest.Capabilities{FSRead: []string{"home://"}}, env); err == nil {
		t.Fatal("New accepted home:// without Env.HomesDir")
	}
	g, err := New(manifest.Capabilities{FSRead: []string{"*"}}, env)
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.FSRead("default", "home://x")
	wantDenied(t, err, "fs_read", "no homes directory")
}

// TestFSWildcardConfinedToWorkspace is upstream test 13, on a real directory.
func TestFSWildcardConfinedToWorkspace(t *testing.T) {
	parent := t.TempDir()
	env := Env{Workspace: filepath.Join(parent, "project"), HomesDir: "/home/user/.astrid/home"}
	ws := Root{Grant: "*", Dir: env.Workspace, Base: env.Workspace}
	var cases []fsCase
	for _, writing := range []bool{false, true} {
		grants := []string{"*"}
		cases = append(cases,
			fsCase{name: "inside", read: grants, write: grants, writing: writing, path: env.Workspace + "/a/b.txt", want: Root{Grant: "*", Dir: ws.Dir, Rel: "a/b.txt", Base: ws.Base}},
			fsCase{name: "root itself", read: grants, write: grants, writing: writing, path: env.Workspace, want: Root{Grant: "*", Dir: ws.Dir, Rel: ".", Base: ws.Base}},
			fsCase{name: "relative", read: grants, write: grants, writing: writing, path: "a/b.txt", want: Root{Grant: "*", Dir: ws.Dir, Rel: "a/b.txt", Base: ws.Base}},
			fsCase{name: "dot", read: grants, write: grants, writing: writing, path: ".", want: Root{Grant: "*", Dir: ws.Dir, Rel: ".", Base: ws.Base}},
			fsCase{name: "etc/passwd", read: grants, write: grants, writing: writing, path: "/etc/passwd"},
			fsCase{name: "user key", read: grants, write: grants, writing: writing, path: "/home/user/.astrid/keys/user.key"},
			fsCase{name: "sibling project-evil", read: grants, write: grants, writing: writing, path: parent + "/project-evil/x"},
			fsCase{name: "parent", read: grants, write: grants, writing: writing, path: parent},
			fsCase{name: "traversal", read: grants, write: grants, writing: writing, path: env.Workspace + "/../../etc/passwd"},
		)
	}
	runFS(t, env, cases)
}

// TestFSSchemesAndSpecificity covers what upstream has no test for: scheme
// request forms, cwd:// leading slashes, and the most specific grant winning.
func TestFSSchemesAndSpecificity(t *testing.T) {
	install := fixture.InstallDir
	runFS(t, fixture, []fsCase{
		{name: "cwd request form", read: []string{"cwd://"}, path: "cwd://data/x", want: Root{Grant: "cwd://", Dir: install, Rel: "data/x", Base: install}},
		{name: "cwd:///etc grant is install/etc", read: []string{"cwd:///etc"}, path: install + "/etc/hosts", want: Root{Grant: "cwd:///etc", Dir: install + "/etc", Rel: "hosts", Base: install}},
		{name: "cwd:///etc grant is not /etc", read: []string{"cwd:///etc"}, path: "/etc/hosts"},
		{name: "cwd:///etc request is install/etc", read: []string{"cwd://"}, path: "cwd:///etc/hosts", want: Root{Grant: "cwd://", Dir: install, Rel: "etc/hosts", Base: install}},
		{name: "home request root", read: []string{"home://"}, principal: "alice", path: "home://", want: Root{Grant: "home://", Dir: "/home/user/.astrid/home/alice", Rel: ".", Base: "/home/user/.astrid/home/alice"}},
		{name: "home request with trailing slash", read: []string{"home://"}, principal: "alice", path: "home://notes/", want: Root{Grant: "home://", Dir: "/home/user/.astrid/home/alice", Rel: "notes", Base: "/home/user/.astrid/home/alice"}},
		{name: "home request is own home only", read: []string{"home://"}, principal: "alice", path: "home://../bob/x"},
		{name: "deepest grant wins", read: []string{"*", "/workspace/data", "/workspace/data/cache"}, path: "/workspace/data/cache/x", want: Root{Grant: "/workspace/data/cache", Dir: "/workspace/data/cache", Rel: "x", Base: "/workspace/data/cache"}},
		{name: "deepest grant wins in any order", read: []string{"/workspace/data", "*"}, path: "/workspace/data/x", want: Root{Grant: "/workspace/data", Dir: "/workspace/data", Rel: "x", Base: "/workspace/data"}},
		{name: "equal dirs: first declared", read: []string{"/workspace", "*"}, path: "/workspace/x", want: Root{Grant: "/workspace", Dir: "/workspace", Rel: "x", Base: "/workspace"}},
		{name: "literal root grant", read: []string{"/"}, path: "/etc/hosts", want: Root{Grant: "/", Dir: "/", Rel: "etc/hosts", Base: "/"}},
		{name: "literal grant with trailing slash", read: []string{"/workspace/src/"}, path: "/workspace/src/a", want: Root{Grant: "/workspace/src/", Dir: "/workspace/src", Rel: "a", Base: "/workspace/src"}},
		{name: "write grant does not read", write: []string{"*"}, path: "/workspace/x"},
		{name: "read grant does not write", read: []string{"*"}, writing: true, path: "/workspace/x"},
		{name: "no grants", path: "/workspace/x"},
	})
}

func TestRootPaths(t *testing.T) {
	cases := []struct {
		root      Root
		sub, path string
	}{
		{Root{Dir: "/h/alice/notes", Rel: "a/b", Base: "/h/alice"}, "notes", "/h/alice/notes/a/b"},
		{Root{Dir: "/workspace", Rel: ".", Base: "/workspace"}, ".", "/workspace"},
		{Root{Dir: "/", Rel: "etc", Base: "/"}, ".", "/etc"},
		{Root{Dir: "/x", Rel: "y", Base: "/unrelated"}, ".", "/x/y"},
	}
	for _, tc := range cases {
		if got := tc.root.Sub(); got != tc.sub {
			t.Errorf("%+v.Sub() = %q, want %q", tc.root, got, tc.sub)
		}
		if got := tc.root.Path(); got != tc.path {
			t.Errorf("%+v.Path() = %q, want %q", tc.root, got, tc.path)
		}
	}
}

func TestFSDenialText(t *testing.T) {
	g := mustGate(t, manifest.Capabilities{FSRead: []string{"*", "home://"}})
	_, err := g.FSRead("default", "/etc/passwd")
	if want := "fs_read denied: /etc/passwd is outside *, home://"; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
	_, err = g.FSRead("default", "cwd://x")
	wantDenied(t, err, "fs_read", "cwd://x ("+fixture.InstallDir+"/x) is outside *, home://")
	_, err = g.FSRead("default", "a/../../x")
	wantDenied(t, err, "fs_read", `has a ".." component`)
	_, err = g.FSRead("default", "/workspace/a\x00b")
	wantDenied(t, err, "fs_read", `"/workspace/a\x00b" contains a NUL byte`)
	_, err = g.FSRead("../bob", "/workspace/x")
	wantDenied(t, err, "fs_read", "principal that is not valid", "invalid principal")
}
