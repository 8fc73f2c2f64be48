package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/internal/admin"
	"github.com/astrid-go/astrid/internal/engine/mcp/mcptest"
	"github.com/astrid-go/astrid/internal/sandbox"
	"github.com/astrid-go/astrid/internal/testutil"
)

// TestShellEscapesThroughTheDaemon runs what an attacker would ask an
// approved shell command to do, through the real binary and a real
// daemon (`astrid tool call run_shell_command … --yes`): each is refused
// by the OS, the result says the sandbox refused it, nothing outside the
// grants changes and the daemon keeps serving. The control writes the
// workspace.
func TestShellEscapesThroughTheDaemon(t *testing.T) {
	if err := sandbox.Need(sandbox.ABI()); err != nil {
		t.Skipf("this kernel cannot confine: %v", err)
	}
	home, ws, outside := t.TempDir(), t.TempDir(), t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(outside, "secret"), []byte("OUTSIDE-SECRET"), 0o600))
	must(os.Symlink(outside, filepath.Join(ws, "link-out")))
	must(os.Symlink(home, filepath.Join(ws, "link-home")))
	// What the home holds once used: a key (32 bytes, usable: the kernel
	// unseals the host signing key with it), a config.
	must(os.WriteFile(filepath.Join(home, "secrets.key"), []byte(homeSecretKey), 0o600))
	must(os.WriteFile(filepath.Join(home, "config.toml"), []byte("# HOME-SECRET\n"), 0o600))
	pid := startedPid(t, home, ws)
	sock := filepath.Join(home, "run", "astrid.sock")
	testutil.WaitFor(t, daemonPatience, "the daemon's socket", func() bool { _, err := os.Stat(sock); return err == nil })
	var adminPort string
	testutil.WaitFor(t, daemonPatience, "the admin run file", func() bool {
		b, err := os.ReadFile(filepath.Join(home, "run", "admin.json"))
		var info admin.RunInfo
		if err != nil || json.Unmarshal(b, &info) != nil {
			return false
		}
		u, err := url.Parse(info.BaseURL)
		adminPort = u.Port()
		return err == nil && adminPort != ""
	})
	shell := func(command string) (string, int) {
		args, _ := json.Marshal(map[string]string{"command": command})
		return runProcess(t, home, "tool", "call", "run_shell_command", string(args), "--yes", "--workspace", ws)
	}

	// The control first: granted work runs confined.
	if out, code := shell("echo granted > out.txt && cat out.txt && touch \"$TMPDIR/t\" && ls \"$TMPDIR\""); code != 0 || !strings.Contains(out, "granted") {
		t.Fatalf("the control failed (exit %d): %s", code, out)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "out.txt")); string(b) != "granted\n" {
		t.Fatalf("the control's file holds %q", b)
	}
	escapes := []struct{ name, command string }{
		{"read Astrid's secrets key", "cat " + filepath.Join(home, "secrets.key")},
		{"read the home's state by a symlink in the workspace", "cat link-home/secrets.key"},
		{"read the home's config", "cat " + filepath.Join(home, "config.toml")},
		{"read outside by a symlink in the workspace", "cat link-out/secret"},
		{"read /etc/passwd", "cat /etc/passwd"},
		{"read through /proc/self/root", "cat /proc/self/root" + outside + "/secret"},
		{"read the daemon's environment", fmt.Sprintf("cat /proc/%d/environ", pid)},
		{"read the daemon's files through its /proc root", fmt.Sprintf("cat /proc/%d/root%s/secret", pid, outside)},
		{"write outside the grants", "echo x > " + outside + "/planted"},
		{"write the user's /tmp", "echo x > /tmp/astrid-escape-" + filepath.Base(ws)},
		{"write /dev/shm", "echo x > /dev/shm/astrid-escape-" + filepath.Base(ws)},
		{"plant a capsule in the home", "mkdir -p " + filepath.Join(home, "capsules", "evil")},
		{"signal the daemon", fmt.Sprintf("kill -TERM %d", pid)},
		{"connect to the daemon's socket", "python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(\"" + sock + "\")'"},
		// Through python, not bash's /dev/tcp, which the deny list
		// refuses before the OS is asked.
		{"connect to the admin port", "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", " + adminPort + "))'"},
		{"connect to the metadata address", "python3 -c 'import socket; socket.create_connection((\"169.254.169.254\", 80), timeout=5)'"},
		{"send UDP", "python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b\"x\", (\"127.0.0.1\", 53))'"},
		{"escape the call's tree with setsid and read outside", "setsid -f sh -c 'cat " + outside + "/secret > got.tmp 2>&1; mv got.tmp got'; for i in $(seq 600); do [ -e got ] && break; sleep 0.05; done; cat got; grep -q OUTSIDE got"},
	}
	for _, e := range escapes {
		t.Run(e.name, func(t *testing.T) {
			out, code := shell(e.command)
			if code == 0 {
				t.Fatalf("%q succeeded: %s", e.command, out)
			}
			if strings.Contains(out, "SECRET") {
				t.Fatalf("%q printed a secret: %s", e.command, out)
			}
			if !strings.Contains(out, "ran confined by Astrid's sandbox") {
				t.Fatalf("%q: the result does not say the sandbox refused it: %s", e.command, out)
			}
		})
	}
	for _, p := range []string{filepath.Join(outside, "planted"), "/tmp/astrid-escape-" + filepath.Base(ws), "/dev/shm/astrid-escape-" + filepath.Base(ws), filepath.Join(home, "capsules", "evil")} {
		if _, err := os.Lstat(p); err == nil {
			_ = os.RemoveAll(p)
			t.Errorf("%s was created", p)
		}
	}
	// Outside the sandbox only when the person says so for this once:
	// --yes does not cover it, --dangerously-unconfined does.
	args := `{"command":"cat link-out/secret","unconfined":true}`
	if out, code := runProcess(t, home, "tool", "call", "run_shell_command", args, "--yes", "--workspace", ws); code == 0 || strings.Contains(out, "OUTSIDE-SECRET") || !strings.Contains(out, "--yes never covers that") {
		t.Fatalf("unconfined with --yes alone (exit %d): %s", code, out)
	}
	if out, code := runProcess(t, home, "tool", "call", "run_shell_command", args, "--yes", "--dangerously-unconfined", "--workspace", ws); code != 0 || !strings.Contains(out, "OUTSIDE-SECRET") {
		t.Fatalf("unconfined with --dangerously-unconfined (exit %d): %s", code, out)
	}
	// The daemon is unharmed and still serves.
	if out, code := shell("echo still here"); code != 0 || !strings.Contains(out, "still here") {
		t.Fatalf("after the escapes (exit %d): %s", code, out)
	}
}

// TestConfinedShellAuto: with [approval] confined_shell = "auto" a
// command that runs confined is not asked about (here nobody could be
// asked: no terminal, no --yes), one asked to run unconfined still is, and
// without the setting the same command is asked and, unanswerable, denied.
func TestConfinedShellAuto(t *testing.T) {
	if err := sandbox.Need(sandbox.ABI()); err != nil {
		t.Skipf("this kernel cannot confine: %v", err)
	}
	for _, auto := range []bool{true, false} {
		home, ws := t.TempDir(), t.TempDir()
		if auto {
			if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("[approval]\nconfined_shell = \"auto\"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		out, code := runProcess(t, home, "tool", "call", "run_shell_command", `{"command":"echo ran > ran.txt && cat ran.txt"}`, "--workspace", ws, "--no-daemon")
		_, err := os.Stat(filepath.Join(ws, "ran.txt"))
		if auto && (code != 0 || err != nil || strings.Contains(out, "denied")) {
			t.Fatalf("auto: a confined command was not run unasked (exit %d): %s", code, out)
		}
		if !auto && (code == 0 || err == nil || !strings.Contains(out, "denied")) {
			t.Fatalf("ask: a command ran although nobody could be asked (exit %d): %s", code, out)
		}
		out, code = runProcess(t, home, "tool", "call", "run_shell_command", `{"command":"echo out > out.txt","unconfined":true}`, "--workspace", ws, "--no-daemon")
		if _, err := os.Stat(filepath.Join(ws, "out.txt")); code == 0 || err == nil {
			t.Fatalf("auto=%v: an unconfined command ran unasked (exit %d): %s", auto, code, out)
		}
	}
}

// TestMCPServerEscapesThroughTheBinary: a stdio MCP server installed as a
// capsule, told it may touch the whole file system, is held by the OS to
// its capsule's grants when called through the real binary: the
// workspace reads, Astrid's home and /etc/passwd do not.
// homeSecretKey is a usable store key whose bytes a leak would show.
const homeSecretKey = "HOME-SECRET-0123456789abcdefghij"

func TestMCPServerEscapesThroughTheBinary(t *testing.T) {
	if err := sandbox.Need(sandbox.ABI()); err != nil {
		t.Skipf("this kernel cannot confine: %v", err)
	}
	npm := mcptest.NPM(t)
	home, ws, src := t.TempDir(), t.TempDir(), t.TempDir()
	modules := npm.Filesystem[:strings.LastIndex(npm.Filesystem, "/node_modules/")+len("/node_modules")]
	manifest := fmt.Sprintf(`[package]
name = "rootfs"
version = "0.1.0"
description = "server-filesystem told it may touch /"

[capabilities]
host_process = ["node"]
fs_read = [%q, "*"]

[[mcp_server]]
id = "root"
type = "stdio"
command = "node"
args = [%q, "/"]
`, modules, npm.Filesystem)
	for path, body := range map[string]string{
		filepath.Join(src, "Capsule.toml"): manifest,
		filepath.Join(ws, "notes.txt"):     "workspace notes",
		filepath.Join(home, "secrets.key"): homeSecretKey,
		// It must exist: a missing file answers ENOENT whether or not the
		// read was allowed (the server checks its roots only once they
		// arrive, after initialize; the OS check is what holds before).
		filepath.Join(home, "config.toml"): "# the operator's settings\n",
	} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if out, code := runProcess(t, home, "capsule", "install", src, "--yes", "--accept-risk"); code != 0 {
		t.Fatalf("install (exit %d): %s", code, out)
	}
	call := func(path string) (string, int) {
		args, _ := json.Marshal(map[string]string{"path": path})
		return runProcess(t, home, "tool", "call", "root:read_text_file", string(args), "--workspace", ws, "--no-daemon")
	}
	if out, code := call(filepath.Join(ws, "notes.txt")); code != 0 || !strings.Contains(out, "workspace notes") {
		t.Fatalf("the granted read (exit %d): %s", code, out)
	}
	for _, p := range []string{filepath.Join(home, "secrets.key"), "/etc/passwd", filepath.Join(home, "config.toml")} {
		out, code := call(p)
		if code == 0 || strings.Contains(out, "SECRET") || strings.Contains(out, "root:x:") || !strings.Contains(strings.ToLower(out), "denied") {
			t.Fatalf("%s (exit %d): %s", p, code, out)
		}
	}
}
