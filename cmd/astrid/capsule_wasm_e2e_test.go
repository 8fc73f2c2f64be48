package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/testutil"
)

// A third-party capsule, in its own Go module: built with `astrid capsule
// build`, dropped into $ASTRID_HOME/capsules, discovered at boot and
// called through the router with `astrid tool call`, its [env] value set
// with `astrid capsule env set`.
func TestThirdPartyWasmCapsuleEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a wasm module")
	}
	src, files := buildGreeter(t)
	var out, errOut string
	var code int

	// The same package as a library component: built to -o, its hash
	// printed for its [[component]], the executable's meta.json untouched.
	meta, _ := os.ReadFile(filepath.Join(src, "meta.json"))
	lib := filepath.Join(t.TempDir(), "greeter-lib.wasm")
	if _, errOut, code := runAstrid(t, "", "capsule", "build", "--library", src); code != 2 || !strings.Contains(errOut, "--library needs -o") {
		t.Errorf("--library without -o: exit %d, %s", code, errOut)
	}
	out, errOut, code = runAstrid(t, "", "capsule", "build", "--library", src, "-o", lib)
	body, _ := os.ReadFile(lib)
	sum := sha256.Sum256(body)
	hash := "sha256:" + hex.EncodeToString(sum[:])
	if code != 0 || !strings.Contains(out, hash) || !strings.Contains(errOut, `set hash = "`+hash+`"`) {
		t.Fatalf("capsule build --library: exit %d, stdout %q, stderr %q (file's %s)", code, out, errOut, hash)
	}
	if after, _ := os.ReadFile(filepath.Join(src, "meta.json")); string(after) != string(meta) {
		t.Errorf("a library build changed meta.json: %s", after)
	}

	home := t.TempDir()
	t.Setenv("ASTRID_HOME", home)
	if out, errOut, code := runAstrid(t, "", "capsule", "install", src, "--yes"); code != 0 {
		t.Fatalf("capsule install: exit %d\n%s%s", code, out, errOut)
	}
	ws := t.TempDir()

	out, errOut, code = runAstrid(t, "", "capsule", "list", "--workspace", ws)
	if code != 0 || !strings.Contains(out, "greeter") || !strings.Contains(out, "wasm") || !strings.Contains(out, "greet") {
		t.Fatalf("capsule list: exit %d\n%s%s", code, out, errOut)
	}

	out, errOut, code = runAstrid(t, "", "tool", "call", "greet", `{"name":"Ada"}`, "--workspace", ws)
	if code != 0 || strings.TrimSpace(out) != "Hello, Ada!" {
		t.Fatalf("tool call: exit %d, stdout %q, stderr %s", code, out, errOut)
	}

	if _, errOut, code = runAstrid(t, "Howdy\n", "capsule", "env", "set", "greeter", "GREETING"); code != 0 {
		t.Fatalf("env set: exit %d: %s", code, errOut)
	}
	out, errOut, code = runAstrid(t, "", "tool", "call", "greet", `{"name":"Ada"}`, "--workspace", ws)
	if code != 0 || strings.TrimSpace(out) != "Howdy, Ada!" {
		t.Fatalf("tool call after env set: exit %d, stdout %q, stderr %s", code, out, errOut)
	}

	// The same, all while a daemon runs (issue 19's Show): the call goes
	// through the daemon; a reinstall with a changed tool is picked up by
	// the running daemon; after remove the tool is gone from it.
	startedPid(t, home, ws)
	t.Cleanup(func() { runProcess(t, home, "stop") })
	out, errOut, code = runAstrid(t, "", "tool", "call", "greet", `{"name":"Ada"}`, "--workspace", ws)
	if code != 0 || strings.TrimSpace(out) != "Howdy, Ada!" {
		t.Fatalf("tool call through the daemon: exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	changed := files["Capsule.toml"] + "\n[[tool]]\nname = \"greet\"\ndescription_for_llm = \"Greets a person warmly, by name\"\n"
	if err := os.WriteFile(filepath.Join(src, "Capsule.toml"), []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	// The install returns once the daemon serves the new capsule (issue
	// 29.3): the next command sees it, with no wait.
	if out, errOut, code := runAstrid(t, "", "capsule", "install", src, "--yes"); code != 0 || !strings.Contains(errOut, "the running daemon loaded capsule greeter (tools: greet)") {
		t.Fatalf("reinstall while the daemon runs: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := runAstrid(t, "", "tool", "list", "--workspace", ws, "--json"); code != 0 || !strings.Contains(out, "Greets a person warmly, by name") {
		t.Fatalf("tool list right after the reinstall: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := runAstrid(t, "", "tool", "call", "greet", `{"name":"Ada"}`, "--workspace", ws); code != 0 || strings.TrimSpace(out) != "Howdy, Ada!" {
		t.Fatalf("tool call after the reinstall: exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	if out, errOut, code := runAstrid(t, "", "capsule", "remove", "greeter"); code != 0 {
		t.Fatalf("remove while the daemon runs: exit %d\n%s%s", code, out, errOut)
	}
	testutil.WaitFor(t, daemonPatience, "the daemon to drop the removed tool", func() bool {
		_, errOut, code := runAstrid(t, "", "tool", "call", "greet", `{"name":"Ada"}`, "--workspace", ws)
		return code == 1 && strings.Contains(errOut, "greet")
	})
}

// buildGreeter writes a third-party capsule, greeter (tool greet), as its
// own Go module in a temporary directory, builds it with `astrid capsule
// build` and returns the directory and its source files.
func buildGreeter(t *testing.T) (string, map[string]string) {
	t.Helper()
	const module = "github.com/astrid-go/astrid"
	src := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/greeter\n\ngo 1.26\n\nrequire " + module + " v0.0.0\n",
		"greeter.go": `package greeter

import "` + module + `/sdk"

type greetArgs struct {
	Name string ` + "`json:\"name\"`" + `
}

// New returns the capsule's code.
func New() *sdk.Capsule {
	c := sdk.New("Greets people")
	sdk.Tool(c, "greet", "Greet a person by name", func(call *sdk.Call, a greetArgs) (string, error) {
		greeting, ok := call.Config("GREETING")
		if !ok {
			greeting = "Hello"
		}
		return greeting + ", " + a.Name + "!", nil
	})
	return c
}
`,
		"Capsule.toml": `[package]
name = "greeter"
version = "0.1.0"
astrid-version = ">=0.1.0"

[[component]]
id = "greeter"
file = "greeter.wasm"

[subscribe]
"tool.v1.execute.greet" = { wit = "opaque", handler = "tool_execute_greet" }
"tool.v1.request.describe" = { wit = "opaque", handler = "tool_describe" }

[publish]
"tool.v1.execute.greet.result" = "opaque"
"tool.v1.response.describe.greeter" = "opaque"

[env]
GREETING = { type = "text", request = "How should greeter greet?", default = "Hello" }
`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, code := runAstrid(t, "", "capsule", "build", src)
	if code != 0 {
		t.Fatalf("capsule build: exit %d\n%s%s", code, out, errOut)
	}
	return src, files
}
