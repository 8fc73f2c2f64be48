package host

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/astrid-go/astrid/hostapi"
)

// FSResolve names the file a grant allows, symlinks resolved, and refuses
// what FSRead or FSWrite would: the fs capsule puts that name to an editor
// (ipc.EditorBufferRequest), which reads and writes with the person's
// authority, so every way out of the grant must fail here.
func TestFSResolveNamesOnlyWhatTheGrantAllows(t *testing.T) {
	f := newFixture(t)
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	for name, text := range map[string]string{
		filepath.Join(f.ws, "notes.txt"):          "notes",
		filepath.Join(f.ws, "sub", "deep.txt"):    "deep",
		filepath.Join(f.ws, "ro", "readonly.txt"): "ro",
		filepath.Join(outside, "secret.txt"):      "secret",
	} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"inner": "sub/deep.txt",                       // stays inside
		"out":   filepath.Join(outside, "secret.txt"), // leads out
		"outd":  outside,                              // a directory out
		"rel":   "../" + filepath.Base(outside),       // relative, out
	} {
		if err := os.Symlink(target, filepath.Join(f.ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	c := f.capsule(t, `
[package]
name = "resolver"
version = "0.1.0"
[capabilities]
fs_read = ["*"]
fs_write = ["`+filepath.Join(f.ws, "sub")+`"]
`)
	call, _ := c.Begin(context.Background(), "default")
	defer call.End()
	for _, tc := range []struct {
		path  string
		write bool
		want  string       // the resolved path, when allowed
		code  hostapi.Code // the refusal, when not
	}{
		{path: "notes.txt", want: filepath.Join(f.ws, "notes.txt")},
		{path: filepath.Join(f.ws, "notes.txt"), want: filepath.Join(f.ws, "notes.txt")},
		{path: "inner", want: filepath.Join(f.ws, "sub", "deep.txt")},
		{path: "sub/deep.txt", write: true, want: filepath.Join(f.ws, "sub", "deep.txt")},
		// Escapes.
		{path: "./sub/../notes.txt", code: hostapi.CodeDenied}, // ".." is refused, as by FSRead
		{path: "../" + filepath.Base(outside) + "/secret.txt", code: hostapi.CodeDenied},
		{path: filepath.Join(outside, "secret.txt"), code: hostapi.CodeDenied},
		{path: "/etc/passwd", code: hostapi.CodeDenied},
		{path: "out", code: hostapi.CodeDenied}, // an absolute link leads out of the os.Root
		{path: "outd/secret.txt", code: hostapi.CodeDenied},
		{path: "rel/secret.txt", code: hostapi.CodeDenied},
		// A write is checked as a write: readable is not writable.
		{path: "ro/readonly.txt", write: true, code: hostapi.CodeDenied},
		{path: "notes.txt", write: true, code: hostapi.CodeDenied},
		// Nothing there: not found, nothing created.
		{path: "sub/new.txt", write: true, code: hostapi.CodeNotFound},
	} {
		got, err := call.FSResolve(tc.path, tc.write)
		switch {
		case tc.want != "" && (err != nil || got != tc.want):
			t.Errorf("resolve %q (write %v) = %q, %v; want %q", tc.path, tc.write, got, err, tc.want)
		case tc.want == "" && hostapi.CodeOf(err) != tc.code:
			t.Errorf("resolve %q (write %v) = %q, %v; want code %s", tc.path, tc.write, got, err, tc.code)
		}
	}
	if _, err := os.Stat(filepath.Join(f.ws, "sub", "new.txt")); !os.IsNotExist(err) {
		t.Errorf("resolving a new file created it: %v", err)
	}
}
