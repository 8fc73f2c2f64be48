package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/testutil"
)

const conformanceDir = "../../../shared/conformance/manifests"

// runCheck runs `astrid capsule check args...` and returns its output and
// exit status.
func runCheck(t *testing.T, args ...string) (string, int) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"capsule", "check"}, args...))
	err := root.Execute()
	code := 0
	if err != nil {
		var e exitError
		if !errors.As(err, &e) {
			t.Fatalf("check %v: %v", args, err)
		}
		code = e.code
	}
	return out.String(), code
}

func conformance(t *testing.T, name string) string {
	t.Helper()
	return testutil.NeedShared(t, filepath.Join(conformanceDir, name))
}

func TestCapsuleCheckConformance(t *testing.T) {
	tests := []struct {
		file     string
		strict   bool
		code     int
		contains []string
		absent   []string
	}{
		{"capsule-react.toml", false, 0, []string{
			"astrid-capsule-react 0.1.0", "loads (0 errors, 0 warnings)", "engines:      wasm, static",
			"imports:      astrid:llm ^1.0", "astrid:context ^1.0",
			"interceptors: user.v1.prompt -> handle_user_prompt (priority 100)",
			"session.v1.clear -> handle_session_clear (priority 100)",
		}, []string{"warning:", "error:"}},
		{"capsule-react.toml", true, 0, []string{"loads (0 errors, 0 warnings, strict: warnings fail)"}, nil},
		{"astrid-capsule-adversarial.toml", false, 0, []string{
			"publish:      cli.v1.command.result.*", "session.v1.response.list.*",
			"subscribe:    cli.v1.command.run.astrid-capsule-adversarial",
			"interceptors: (none)", "uplink = true", `fs_read = ["home://adversarial-lifecycle-home-mounted"]`,
			`env:          adversarial_lifecycle_probe (text) default "runtime-lifecycle-default"`,
		}, []string{"warning:", "error:"}},
		{"astrid-capsule-concurrency.toml", false, 1, []string{
			"does not load (1 error, 1 warning)",
			"astrid-capsule-concurrency.toml:15:18: error: capsule requires astrid-version >=0.10.4, but this runtime is 0.1.0",
			"astrid-capsule-concurrency.toml:24:1: warning: capabilities.bind_workers has no effect here",
			`net_bind = ["127.0.0.1:18231"]`,
		}, nil},
		{"capsule-identity.toml", false, 0, []string{
			"loads (0 errors, 5 warnings)", "exports:      astrid:spark 1.0.0", "publish:      (none: may publish nothing)",
			"interceptors: (none)", `fs_read = ["workspace://"]`,
			"capsule-identity.toml:18:1: warning: legacy capabilities.ipc_publish",
			"capsule-identity.toml:20:3: warning: legacy [[interceptor]]",
			"capsule-identity.toml:12:29: warning: fs_read grant \"workspace://\": workspace:// is not a recognised path scheme",
		}, nil},
		{"capsule-identity.toml", true, 1, []string{"does not load (0 errors, 5 warnings, strict: warnings fail)"}, nil},
		{"capsule-openai-compat.toml", false, 0, []string{
			"loads (0 errors, 6 warnings)", `net = ["*"]`, "api_key (secret)", "base_url (text)",
			"14:2: warning: [dependencies]", "26:3: warning: [[llm_provider]]", "31:3: warning: legacy [[interceptor]]",
			"19:1: warning: legacy capabilities.ipc_publish", `23:21: warning: env base_url: type "string" is read as "text"`,
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			args := []string{conformance(t, tt.file)}
			if tt.strict {
				args = append(args, "--strict")
			}
			out, code := runCheck(t, args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\n%s", code, tt.code, out)
			}
			for _, s := range tt.contains {
				if !strings.Contains(out, s) {
					t.Errorf("output lacks %q:\n%s", s, out)
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(out, s) {
					t.Errorf("output has %q:\n%s", s, out)
				}
			}
		})
	}
}

func TestCapsuleCheckJSON(t *testing.T) {
	out, code := runCheck(t, "--json", "../../examples/hello", conformance(t, "astrid-capsule-concurrency.toml"))
	if code != 1 {
		t.Errorf("exit %d, want 1: one of the two does not load", code)
	}
	var reports []struct {
		ID           string `json:"id"`
		Loads        bool   `json:"loads"`
		Engines      []string
		Publish      []string
		Interceptors []struct {
			Pattern, Handler string
			Priority         uint32
		}
		Diagnostics []struct{ Severity, Message string }
	}
	if err := json.Unmarshal([]byte(out), &reports); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(reports) != 2 || reports[0].ID != "hello" || !reports[0].Loads || reports[1].Loads {
		t.Fatalf("reports = %+v", reports)
	}
	if len(reports[0].Interceptors) != 2 || reports[0].Interceptors[0].Handler != "tool_execute_greet" || reports[0].Interceptors[0].Priority != 100 {
		t.Errorf("interceptors = %+v", reports[0].Interceptors)
	}
	if d := reports[1].Diagnostics; len(d) == 0 || d[1].Severity != "error" {
		t.Errorf("diagnostics = %+v", d)
	}
}

func TestCapsuleCheckExampleHello(t *testing.T) {
	out, code := runCheck(t, "../../examples/hello")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, s := range []string{"hello 0.1.0", "engines:      wasm, static", "tool.v1.execute.greet.result", "tool.v1.execute.greet -> tool_execute_greet (priority 100)", `GREETING (text) default "Hello"`} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
}

func TestCapsuleCheckMissingPath(t *testing.T) {
	out, code := runCheck(t, filepath.Join(t.TempDir(), "nothing"))
	if code != 1 || !strings.Contains(out, "does not load") || !strings.Contains(out, "no manifest here") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// check runs the loader's integrity check: a component whose meta.json or
// [[component]] hash does not match, that nothing vouches for, that is a
// FIFO or a link out of the directory, or that is over the size limit, does
// not load here either (before, check said "loads" for a mismatch that load
// then refused).
func TestCapsuleCheckRunsTheLoadersIntegrityCheck(t *testing.T) {
	t.Setenv("ASTRID_HOME", t.TempDir())
	module := []byte("\x00asm\x01\x00\x00\x00")
	const good = "sha256:93a44bbb96c751218e4c00d479e4c14358122a389acca16205b1e4d0dc5f9476"
	capsule := func(t *testing.T, hash string, meta string, setup func(dir string)) string {
		t.Helper()
		dir := t.TempDir()
		text := "[package]\nname = \"mod\"\nversion = \"0.1.0\"\n[[component]]\nid = \"mod\"\nfile = \"mod.wasm\"\ntype = \"executable\"\n"
		if hash != "" {
			text += "hash = \"" + hash + "\"\n"
		}
		if err := os.WriteFile(filepath.Join(dir, "Capsule.toml"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if meta != "" {
			if err := os.WriteFile(filepath.Join(dir, "meta.json"), []byte(`{"wasm_hash":"`+meta+`"}`), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if setup != nil {
			setup(dir)
		} else if err := os.WriteFile(filepath.Join(dir, "mod.wasm"), module, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	other := "sha256:" + strings.Repeat("0", 64)
	tests := []struct {
		name       string
		hash, meta string
		setup      func(dir string)
		want       string // "" loads
	}{
		{"meta.json matches", "", good, nil, ""},
		{"component hash matches", good, "", nil, ""},
		{"meta.json differs", "", other, nil, "meta.json wasm_hash is " + other},
		{"nothing vouches", "", "", nil, "no sha256 vouches"},
		{"fifo component", "", good, func(dir string) {
			if err := mkfifo(filepath.Join(dir, "mod.wasm")); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
		}, "not a regular file"},
		{"component links out", "", good, func(dir string) {
			if err := os.Symlink("/dev/zero", filepath.Join(dir, "mod.wasm")); err != nil {
				t.Fatal(err)
			}
		}, "escapes"},
		{"component over the limit", "", good, func(dir string) {
			if err := os.WriteFile(filepath.Join(os.Getenv("ASTRID_HOME"), "config.toml"), []byte("[limits]\nmax_component_bytes = 4\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "mod.wasm"), module, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "larger than the 4-byte limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, code := runCheck(t, capsule(t, tt.hash, tt.meta, tt.setup))
			if tt.want == "" {
				if code != 0 || !strings.Contains(out, "status:       loads") {
					t.Fatalf("exit %d, want it to load:\n%s", code, out)
				}
				return
			}
			if code != 1 || !strings.Contains(out, "does not load") || !strings.Contains(out, tt.want) {
				t.Fatalf("exit %d, want does not load with %q:\n%s", code, tt.want, out)
			}
		})
	}
}

// The router holds tool_middleware: check says so before anything else,
// and the same manifest without the grant does not load, naming the topic
// and the grant.
func TestCapsuleCheckToolMiddleware(t *testing.T) {
	src, err := os.ReadFile("../../capsules/router/Capsule.toml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Capsule.toml"), src, 0o600); err != nil {
		t.Fatal(err)
	}
	out, code := runCheck(t, dir)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	lines := strings.Split(out, "\n")
	if len(lines) < 2 || !strings.Contains(lines[1], "HIGH RISK: tool_middleware = true") {
		t.Errorf("the grant is not the first thing said:\n%s", out)
	}
	out, _ = runCheck(t, "--json", dir)
	if !strings.Contains(out, `"high_risk": [`) {
		t.Errorf("--json lacks high_risk:\n%s", out)
	}

	without := strings.Replace(string(src), "tool_middleware = true", "", 1)
	if err := os.WriteFile(filepath.Join(dir, "Capsule.toml"), []byte(without), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code = runCheck(t, dir)
	if code != 1 || strings.Contains(out, "HIGH RISK") {
		t.Fatalf("without the grant: exit %d:\n%s", code, out)
	}
	for _, s := range []string{"does not load", `"tool.v1.request.execute" would intercept tool.v1.request.execute`, `"tool.v1.execute.result" would publish on tool.v1.execute.result`, "[capabilities] tool_middleware = true"} {
		if !strings.Contains(out, s) {
			t.Errorf("without the grant, output lacks %q:\n%s", s, out)
		}
	}
}

// An operator sees which tools say they ask the person themselves (the
// approval layer then does not ask for them).
func TestCapsuleCheckShowsToolsThatAskForThemselves(t *testing.T) {
	out, code := runCheck(t, "../../capsules/shell")
	if code != 0 || !strings.Contains(out, "tools:        run_shell_command (mutable; asks the person itself for each call, so the approval layer does not ask)") ||
		!strings.Contains(out, "host_process") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	out, _ = runCheck(t, "../../capsules/fs")
	if !strings.Contains(out, "write_file (mutable)") || !strings.Contains(out, "read_file\n") {
		t.Fatalf("fs:\n%s", out)
	}
}

// TestCapsuleCheckReportsEachComponent: each [[component]] is checked as
// the loader reads it, in order: one that passes, one that is no wasm module
// (the capsule does not load, naming it), one not built yet.
func TestCapsuleCheckReportsEachComponent(t *testing.T) {
	dir := t.TempDir()
	mod := []byte("\x00asm\x01\x00\x00\x00")
	sum := sha256.Sum256(mod)
	good := "sha256:" + hex.EncodeToString(sum[:])
	notWasm := []byte("#!/bin/sh\n")
	sum = sha256.Sum256(notWasm)
	bad := "sha256:" + hex.EncodeToString(sum[:])
	for f, b := range map[string][]byte{"app.wasm": mod, "lib.wasm": notWasm} {
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	toml := `[package]
name = "multi"
version = "0.1.0"

[[component]]
id = "app"
file = "app.wasm"
link = ["lib", "later"]
hash = "` + good + `"

[[component]]
id = "lib"
file = "lib.wasm"
type = "library"
hash = "` + bad + `"

[[component]]
id = "later"
file = "later.wasm"
type = "library"
`
	if err := os.WriteFile(filepath.Join(dir, "Capsule.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := runCheck(t, dir)
	if code != 1 {
		t.Errorf("exit %d, want 1 (lib is no wasm module):\n%s", code, out)
	}
	for _, want := range []string{
		"components:   app (app.wasm, executable) links lib, later: ok " + good,
		"lib (lib.wasm, library): refused (see the error below)",
		"later (later.wasm, library): not built",
		"error: component lib.wasm is not WebAssembly",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}

	out, _ = runCheck(t, "--json", dir)
	var rs []struct {
		Components []struct{ ID, Status, SHA256 string }
	}
	if err := json.Unmarshal([]byte(out), &rs); err != nil || len(rs) != 1 {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	r := rs[0]
	if len(r.Components) != 3 || r.Components[0].Status != "ok" || r.Components[0].SHA256 != good || r.Components[2].Status != "not built" {
		t.Errorf("--json components = %+v", r.Components)
	}
}

// Issue 35's bad input at check, each refused with its reason before
// install: a name that reads as flags, a 300-character name, a component
// that is not wasm, a tool a built-in already provides.
func TestCapsuleCheckRefusesIssue35sBadInput(t *testing.T) {
	t.Setenv("ASTRID_HOME", t.TempDir())
	const base = `[package]
name = "NAME"
version = "0.1.0"
astrid-version = ">=0.1.0"
`
	cases := []struct {
		name, toml, wasm, want string
	}{
		{"-rf", base, "", `"-rf" must start and end with a letter or digit`},
		{strings.Repeat("a", 300), base, "", "is 300 bytes long; at most 64 are allowed"},
		{"notwasm", base + "\n[[component]]\nid = \"notwasm\"\nfile = \"notwasm.wasm\"\ntype = \"executable\"\n", "#!/bin/sh\n", "is not WebAssembly"},
		{"taken", base + "\n[capabilities]\nhost_process = [\"server.py\"]\n\n[[mcp_server]]\nid = \"taken\"\ntype = \"stdio\"\ncommand = \"server.py\"\n\n[[tool]]\nname = \"read_file\"\ndescription_for_llm = \"x\"\n",
			"", "tool read_file is provided by built-in capsule astrid-capsule-fs"},
	}
	for _, tc := range cases {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "Capsule.toml"), []byte(strings.Replace(tc.toml, "NAME", tc.name, 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		if tc.wasm != "" {
			if err := os.WriteFile(filepath.Join(dir, tc.name+".wasm"), []byte(tc.wasm), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "server.py"), []byte("#!/usr/bin/env python3\n"), 0o700); err != nil {
			t.Fatal(err)
		}
		out, code := runCheck(t, dir)
		if code != 1 || !strings.Contains(out, "does not load") || !strings.Contains(out, tc.want) {
			t.Errorf("%.20s: exit %d, want 1 and %q:\n%s", tc.name, code, tc.want, out)
		}
	}
}
