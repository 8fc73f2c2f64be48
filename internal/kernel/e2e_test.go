package kernel

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/ipc"
)

// toolCase is one tool call through the bus and what must come back.
type toolCase struct {
	name    string
	tool    string
	args    string
	isError bool
	// want must be contained in the result content.
	want string
	// check runs after the call, on the workspace.
	check func(t *testing.T, ws string)
}

// suiteFixture lays out a workspace and a directory outside it, with
// symlinks from inside pointing out.
type suiteFixture struct {
	ws, outside string
}

func newSuiteFixture(t *testing.T, ws string) suiteFixture {
	t.Helper()
	outside := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(ws, "a.txt"), []byte("line1\nline2\nline3"), 0o644))
	must(os.MkdirAll(filepath.Join(ws, "sub", "deep"), 0o755))
	must(os.WriteFile(filepath.Join(ws, "sub", "b.txt"), []byte("needle in b\nnothing"), 0o644))
	must(os.WriteFile(filepath.Join(ws, "sub", "deep", "c.txt"), []byte("x\nneedle in c"), 0o644))
	must(os.WriteFile(filepath.Join(ws, "twice.txt"), []byte("dup dup"), 0o644))
	must(os.WriteFile(filepath.Join(ws, "edit.txt"), []byte("hello old world"), 0o644))
	must(os.WriteFile(filepath.Join(ws, "del.txt"), []byte("bye"), 0o644))
	must(os.WriteFile(filepath.Join(ws, "mv.txt"), []byte("moving"), 0o644))
	must(os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("TOP SECRET"), 0o644))
	must(os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(ws, "link.txt")))
	must(os.Symlink(outside, filepath.Join(ws, "linkdir")))
	return suiteFixture{ws: ws, outside: outside}
}

// snapshot returns every file under dir with its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[p] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func fileIs(rel, want string) func(t *testing.T, ws string) {
	return func(t *testing.T, ws string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(ws, rel))
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		if string(b) != want {
			t.Errorf("%s = %q, want %q", rel, b, want)
		}
	}
}

func absent(rel string) func(t *testing.T, ws string) {
	return func(t *testing.T, ws string) {
		t.Helper()
		if _, err := os.Lstat(filepath.Join(ws, rel)); !os.IsNotExist(err) {
			t.Errorf("%s should not exist (err %v)", rel, err)
		}
	}
}

func toolSuite(f suiteFixture) []toolCase {
	secret := filepath.Join(f.outside, "secret.txt")
	return []toolCase{
		// Every fs tool, working.
		{name: "read whole file", tool: "read_file", args: `{"file_path":"a.txt"}`, want: "line1\nline2\nline3"},
		{name: "read line range", tool: "read_file", args: `{"file_path":"a.txt","start_line":2,"end_line":3}`, want: "line2\nline3"},
		{name: "read absolute path inside", tool: "read_file", args: `{"file_path":"` + filepath.Join(f.ws, "a.txt") + `"}`, want: "line1"},
		{name: "write new file", tool: "write_file", args: `{"file_path":"new.txt","content":"fresh"}`, want: "Successfully wrote", check: fileIs("new.txt", "fresh")},
		{name: "write in missing dir", tool: "write_file", args: `{"file_path":"nodir/x.txt","content":"x"}`, isError: true, want: "does not exist", check: absent("nodir")},
		{name: "replace once", tool: "replace_in_file", args: `{"file_path":"edit.txt","old_string":"old","new_string":"new"}`, check: fileIs("edit.txt", "hello new world")},
		{name: "replace not found", tool: "replace_in_file", args: `{"file_path":"edit.txt","old_string":"zzz","new_string":"y"}`, isError: true, want: "Exact string not found"},
		{name: "replace ambiguous", tool: "replace_in_file", args: `{"file_path":"twice.txt","old_string":"dup","new_string":"y"}`, isError: true, want: "Found 2 occurrences", check: fileIs("twice.txt", "dup dup")},
		{name: "create directory", tool: "create_directory", args: `{"dir_path":"made"}`, check: func(t *testing.T, ws string) {
			if fi, err := os.Stat(filepath.Join(ws, "made")); err != nil || !fi.IsDir() {
				t.Errorf("made is not a directory: %v", err)
			}
		}},
		{name: "delete file", tool: "delete_file", args: `{"file_path":"del.txt"}`, check: absent("del.txt")},
		{name: "delete missing", tool: "delete_file", args: `{"file_path":"ghost.txt"}`, isError: true, want: "does not exist"},
		{name: "delete directory refused", tool: "delete_file", args: `{"file_path":"sub"}`, isError: true, want: "is a directory"},
		{name: "move file", tool: "move_file", args: `{"source_path":"mv.txt","destination_path":"sub/moved.txt"}`, check: func(t *testing.T, ws string) {
			absent("mv.txt")(t, ws)
			fileIs("sub/moved.txt", "moving")(t, ws)
		}},
		{name: "move onto existing", tool: "move_file", args: `{"source_path":"a.txt","destination_path":"twice.txt"}`, isError: true, want: "already exists", check: fileIs("twice.txt", "dup dup")},
		{name: "list directory", tool: "list_directory", args: `{"dir_path":"sub"}`, want: `"b.txt"`},
		{name: "grep", tool: "grep_search", args: `{"pattern":"needle"}`, want: "sub/b.txt:1:needle in b"},
		{name: "grep deep", tool: "grep_search", args: `{"pattern":"needle","dir_path":"sub/deep"}`, want: "sub/deep/c.txt:2:needle in c"},
		{name: "grep nothing", tool: "grep_search", args: `{"pattern":"no-such-text-anywhere"}`, want: "No matches found."},
		{name: "missing required argument", tool: "read_file", args: `{}`, isError: true, want: "file_path"},

		// Routing failures.
		{name: "unknown tool", tool: "no_such_tool", args: `{}`, isError: true, want: "Unknown tool"},
		{name: "dotted name", tool: "foo.bar", args: `{}`, isError: true, want: "Invalid tool name"},
		{name: "name with space", tool: "a b", args: `{}`, isError: true, want: "Invalid tool name"},
		{name: "empty name", tool: "", args: `{}`, isError: true, want: "Invalid tool name"},

		// Escapes: every one an error, nothing outside read or changed.
		{name: "traversal", tool: "read_file", args: `{"file_path":"../../etc/passwd"}`, isError: true, want: "denied"},
		{name: "absolute outside", tool: "read_file", args: `{"file_path":"/etc/passwd"}`, isError: true, want: "denied"},
		{name: "absolute outside, secret", tool: "read_file", args: `{"file_path":"` + secret + `"}`, isError: true, want: "denied"},
		{name: "read through symlink", tool: "read_file", args: `{"file_path":"link.txt"}`, isError: true},
		{name: "read through symlinked dir", tool: "read_file", args: `{"file_path":"linkdir/secret.txt"}`, isError: true},
		{name: "list through symlinked dir", tool: "list_directory", args: `{"dir_path":"linkdir"}`, isError: true},
		{name: "write through symlink", tool: "write_file", args: `{"file_path":"link.txt","content":"pwned"}`, isError: true},
		{name: "write through symlinked dir", tool: "write_file", args: `{"file_path":"linkdir/new.txt","content":"pwned"}`, isError: true},
		{name: "write outside", tool: "write_file", args: `{"file_path":"` + filepath.Join(f.outside, "x.txt") + `","content":"pwned"}`, isError: true, want: "denied"},
		{name: "write traversal", tool: "write_file", args: `{"file_path":"sub/../../x.txt","content":"pwned"}`, isError: true, want: "denied"},
		{name: "move out", tool: "move_file", args: `{"source_path":"a.txt","destination_path":"` + filepath.Join(f.outside, "a.txt") + `"}`, isError: true, want: "denied", check: fileIs("a.txt", "line1\nline2\nline3")},
		{name: "delete outside", tool: "delete_file", args: `{"file_path":"` + secret + `"}`, isError: true, want: "denied"},
		{name: "grep outside", tool: "grep_search", args: `{"pattern":"SECRET","dir_path":"` + f.outside + `"}`, isError: true, want: "denied"},
		{name: "grep does not follow symlinks out", tool: "grep_search", args: `{"pattern":"SECRET"}`, want: "No matches found."},
	}
}

// runToolSuite runs every case through k's bus and checks that nothing
// outside the workspace was read into a result or changed. It is shared by
// the native run here and the wasm engine's run of the same capsules.
func runToolSuite(t *testing.T, k *Kernel, ws string) {
	f := newSuiteFixture(t, ws)
	before := snapshot(t, f.outside)
	for _, c := range toolSuite(f) {
		t.Run(c.name, func(t *testing.T) {
			res, err := k.CallTool(context.Background(), ipc.DefaultPrincipal, c.tool, json.RawMessage(c.args), testTimeout)
			if err != nil {
				t.Fatalf("call %s: %v", c.tool, err)
			}
			if res.IsError != c.isError {
				t.Fatalf("is_error = %v, want %v; content: %s", res.IsError, c.isError, res.Content)
			}
			if !strings.Contains(res.Content, c.want) {
				t.Errorf("content %q does not contain %q", res.Content, c.want)
			}
			if strings.Contains(res.Content, "TOP SECRET") {
				t.Errorf("content leaked a file outside the workspace: %q", res.Content)
			}
			if res.IsError && res.Content == "" {
				t.Error("an error result must say what went wrong")
			}
			if c.check != nil {
				c.check(t, ws)
			}
		})
	}
	after := snapshot(t, f.outside)
	if len(after) != len(before) {
		t.Errorf("files outside the workspace changed: before %v, after %v", before, after)
	}
	for p, v := range before {
		if after[p] != v {
			t.Errorf("%s changed outside the workspace: %q → %q", p, v, after[p])
		}
	}
}

func TestToolSuiteNative(t *testing.T) {
	k, ws := bootTest(t, nil)
	runToolSuite(t, k, ws)
}

func TestToolListDescribesEveryFSTool(t *testing.T) {
	k, _ := bootTest(t, nil)
	tools, missing, err := k.ListTools(context.Background(), ipc.DefaultPrincipal, testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) != 0 {
		t.Errorf("capsules did not answer: %v", missing)
	}
	mutable := map[string]bool{
		"read_file": false, "write_file": true, "replace_in_file": true, "create_directory": true,
		"delete_file": true, "move_file": true, "list_directory": false, "grep_search": false,
	}
	got := map[string]ToolInfo{}
	for _, ti := range tools {
		got[ti.Name] = ti
	}
	for name, mut := range mutable {
		ti, ok := got[name]
		if !ok {
			t.Errorf("tool %s not described", name)
			continue
		}
		if ti.Mutable != mut || ti.Capsule != "astrid-capsule-fs" {
			t.Errorf("%s: mutable %v capsule %s, want %v astrid-capsule-fs", name, ti.Mutable, ti.Capsule, mut)
		}
		var schema struct {
			Type       string         `json:"type"`
			Properties map[string]any `json:"properties"`
		}
		if err := json.Unmarshal(ti.InputSchema, &schema); err != nil || schema.Type != "object" || len(schema.Properties) == 0 {
			t.Errorf("%s: schema %s", name, ti.InputSchema)
		}
	}
	if len(got) != len(mutable) {
		t.Errorf("described %d tools, want %d", len(got), len(mutable))
	}
}
