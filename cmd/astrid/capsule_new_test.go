package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/capsulebuild"
	"github.com/astrid-go/astrid/internal/sandbox"
)

// capsule new's wasm scaffold builds with capsule build, passes capsule
// check without a warning, installs, and its tool answers through the
// router, its [env] default included.
func TestCapsuleNewWasmBuildsAndInstalls(t *testing.T) {
	// Parallel: among the longest of a race run (wasm compiled by a
	// race-instrumented kernel, builds), and it changes no process-wide state.
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a wasm module")
	}
	home, ws, src := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "hello-world")
	out, code := runProcess(t, home, "capsule", "new", "hello-world", "--dir", src)
	if code != 0 || !strings.Contains(out, "wrote the wasm capsule hello-world") || !strings.Contains(out, "astrid capsule build "+src) {
		t.Fatalf("capsule new: exit %d:\n%s", code, out)
	}
	for _, f := range []string{"go.mod", "helloworld.go", "helloworld_test.go", "Capsule.toml", "README.md", ".gitignore"} {
		if _, err := os.Stat(filepath.Join(src, f)); err != nil {
			t.Errorf("the scaffold has no %s: %v", f, err)
		}
	}
	if out, code := runProcess(t, home, "capsule", "build", src); code != 0 {
		t.Fatalf("capsule build: exit %d:\n%s", code, out)
	}
	if out, code := runProcess(t, home, "capsule", "check", "--strict", src); code != 0 {
		t.Fatalf("capsule check --strict of the built scaffold: exit %d:\n%s", code, out)
	}
	if out, code := runProcess(t, home, "capsule", "install", src, "--yes"); code != 0 {
		t.Fatalf("capsule install: exit %d:\n%s", code, out)
	}
	// The first call compiles the wasm module: under the race detector on
	// a loaded machine that took past tool call's default 60 s.
	out, code = runProcess(t, home, "tool", "call", "hello_world", `{"name":"Ada"}`, "--workspace", ws, "--timeout", "10m")
	if code != 0 || strings.TrimSpace(out) != "Hello, Ada!" {
		t.Fatalf("tool call hello_world: exit %d: %q", code, out)
	}
}

// The native scaffold is a package of the astrid module: it compiles, with
// its test, against this checkout, and passes capsule check.
func TestCapsuleNewNativeCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a package")
	}
	root, err := capsulebuild.SourceRoot()
	if err != nil {
		t.Skip(err)
	}
	home, mod := t.TempDir(), t.TempDir()
	src := filepath.Join(mod, "clock")
	if out, code := runProcess(t, home, "capsule", "new", "clock", "--native", "--dir", src); code != 0 {
		t.Fatalf("capsule new --native: exit %d:\n%s", code, out)
	}
	if out, code := runProcess(t, home, "capsule", "check", "--strict", src); code != 0 {
		t.Fatalf("capsule check --strict: exit %d:\n%s", code, out)
	}
	// Stand in for the checkout's capsules/ directory: a module that uses
	// this checkout through a go.work, as capsule build does.
	v, _, _ := strings.Cut(strings.TrimPrefix(runtime.Version(), "go"), " ")
	files := map[string]string{
		"go.mod":  "module example.com/x\n\ngo " + v + "\n",
		"go.work": fmt.Sprintf("go %s\n\nuse (\n\t%q\n\t%q\n)\n", v, mod, root),
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	vet := exec.Command("go", "vet", "./clock/")
	vet.Dir = mod
	vet.Env = append(os.Environ(), "GOWORK="+filepath.Join(mod, "go.work"), "GOFLAGS=")
	if out, err := vet.CombinedOutput(); err != nil {
		t.Fatalf("go vet of the native scaffold: %v\n%s", err, out)
	}
}

// The MCP scaffold passes capsule check, its server answers MCP over
// stdio on its own, and installed, astrid starts it confined (its install
// directory readable to it, the rest of $ASTRID_HOME not) and calls its
// tool, with no question (the tool says it changes nothing).
func TestCapsuleNewMCPServerAnswers(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("the MCP scaffold's server runs /usr/bin/python3")
	}
	home, ws, src := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "greeter-mcp")
	if out, code := runProcess(t, home, "capsule", "new", "greeter-mcp", "--mcp", "--dir", src); code != 0 {
		t.Fatalf("capsule new --mcp: exit %d:\n%s", code, out)
	}
	if out, code := runProcess(t, home, "capsule", "check", "--strict", src); code != 0 {
		t.Fatalf("capsule check --strict: exit %d:\n%s", code, out)
	}
	srv := exec.Command(filepath.Join(src, "server.py"))
	srv.Env = append(os.Environ(), "GREETING=Howdy")
	srv.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"greeter_mcp","arguments":{"name":"Ada"}}}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"greeter_mcp","arguments":{"name":" "}}}
{"jsonrpc":"2.0","id":5,"method":"nope"}
`)
	out, err := srv.Output()
	if err != nil {
		t.Fatalf("server.py: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i, want := range []string{`"protocolVersion": "2025-06-18"`, `"name": "greeter_mcp"`, `"text": "Howdy, Ada!"`, `"isError": true`, `"code": -32601`} {
		if i >= len(lines) || !strings.Contains(lines[i], want) {
			t.Errorf("answer %d: want %s in:\n%s", i+1, want, out)
		}
	}

	if err := sandbox.Need(sandbox.ABI()); err != nil {
		t.Skipf("installed, the server starts confined only: %v", err)
	}
	if out, code := runProcess(t, home, "capsule", "install", src, "--yes", "--accept-risk"); code != 0 {
		t.Fatalf("capsule install: exit %d:\n%s", code, out)
	}
	got, code := runProcess(t, home, "tool", "call", "greeter-mcp:greeter_mcp", `{"name":"Ada"}`, "--workspace", ws)
	if code != 0 || strings.TrimSpace(got) != "Hello, Ada!" {
		t.Fatalf("tool call greeter-mcp:greeter_mcp: exit %d: %q", code, got)
	}
}

// Bad input: a name that is not a capsule id, two kinds, a directory that
// is not empty.
func TestCapsuleNewRefusesBadInput(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keep.txt"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"Bad_Name"}, 2, "may use only lowercase ASCII letters"},
		{[]string{"-x"}, 2, ""},
		{[]string{"ok", "--wasm", "--mcp"}, 2, "choose one of --wasm, --native and --mcp"},
		{[]string{"ok", "--dir", dir}, 1, "exists and is not empty"},
		{[]string{}, 2, "accepts 1 arg"},
	} {
		out, code := runProcess(t, home, append([]string{"capsule", "new"}, tc.args...)...)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("capsule new %q: exit %d, want %d and %q:\n%s", tc.args, code, tc.code, tc.want, out)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "keep.txt")); err != nil || string(b) != "mine" {
		t.Errorf("a refused capsule new touched the directory: %q %v", b, err)
	}
}
