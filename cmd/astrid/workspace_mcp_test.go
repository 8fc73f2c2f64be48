package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/engine/mcp/mcptest"
	"github.com/astrid-go/astrid/internal/testutil"
)

// Two clients in two projects call one capsule's stdio MCP server through
// one daemon (DESIGN §4a, §8): each call reaches a server started in the
// caller's directory (server-filesystem told to serve ".", so its
// directory is the workspace it runs in), so each write lands in the
// caller's own directory and each listing shows only its own files, never
// the daemon's workspace or the other client's. Stopping the daemon stops
// every one of those servers.
func TestDaemonMCPServerWorksInEachCallersWorkspace(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a daemon and MCP servers")
	}
	npm := mcptest.NPM(t)
	home, daemonWS, wsA, wsB, src := realDir(t), realDir(t), realDir(t), realDir(t), t.TempDir()
	modules := npm.Filesystem[:strings.LastIndex(npm.Filesystem, "/node_modules/")+len("/node_modules")]
	manifest := fmt.Sprintf(`[package]
name = "files"
version = "0.1.0"
description = "server-filesystem serving the directory it runs in"

[capabilities]
host_process = ["node"]
fs_read = [%q, "*"]
fs_write = ["*"]

[[mcp_server]]
id = "files"
type = "stdio"
command = "node"
args = [%q, "."]
`, modules, npm.Filesystem)
	for path, body := range map[string]string{
		filepath.Join(src, "Capsule.toml"):    manifest,
		filepath.Join(wsA, "only-in-a.txt"):   "A's own",
		filepath.Join(daemonWS, "daemon.txt"): "the daemon's",
	} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if out, code := runProcess(t, home, "capsule", "install", src, "--yes", "--accept-risk"); code != 0 {
		t.Fatalf("install (exit %d): %s", code, out)
	}
	startDaemonIn(t, home, daemonWS)

	write := func(content string) []string {
		return []string{"tool", "call", "files:write_file", `{"path":"where.txt","content":"` + content + `"}`, "--yes"}
	}
	var a, b clientRun
	together(
		func() { a = runClient(t, home, wsA, nil, write("A")...) },
		// From A's directory, but naming B's: the flag wins.
		func() { b = runClient(t, home, wsA, nil, append(write("B"), "--workspace", wsB)...) },
	)
	if a.code != 0 || b.code != 0 {
		t.Fatalf("writes: A exit %d %s%s; B exit %d %s%s", a.code, a.stdout, a.stderr, b.code, b.stdout, b.stderr)
	}
	for ws, want := range map[string]string{wsA: "A", wsB: "B"} {
		if got, err := os.ReadFile(filepath.Join(ws, "where.txt")); err != nil || string(got) != want {
			t.Fatalf("%s/where.txt = %q, %v; want %q", ws, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(daemonWS, "where.txt")); !os.IsNotExist(err) {
		t.Fatalf("a write landed in the daemon's workspace (%v)", err)
	}

	list := []string{"tool", "call", "files:list_directory", `{"path":"."}`}
	for ws, want := range map[string]struct{ has, hasNot string }{
		wsA: {"only-in-a.txt", "daemon.txt"},
		wsB: {"where.txt", "only-in-a.txt"},
	} {
		r := runClient(t, home, ws, nil, list...)
		if r.code != 0 || !strings.Contains(r.stdout, want.has) || strings.Contains(r.stdout, want.hasNot) {
			t.Fatalf("listing from %s (exit %d): %s%s\nwant %s and not %s", ws, r.code, r.stdout, r.stderr, want.has, want.hasNot)
		}
	}

	servers := map[string][]int{}
	for _, ws := range []string{daemonWS, wsA, wsB} {
		if servers[ws] = processesIn(ws); len(servers[ws]) == 0 {
			t.Fatalf("no process runs in %s", ws)
		}
	}
	if out, code := runProcess(t, home, "stop"); code != 0 {
		t.Fatalf("stop (exit %d): %s", code, out)
	}
	for ws := range servers {
		testutil.WaitFor(t, 30*time.Second, "the servers in "+ws+" to stop", func() bool { return len(processesIn(ws)) == 0 })
	}
}

// realDir is a temporary directory with its symlinks resolved, as a
// workspace the daemon took is.
func realDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// processesIn lists the processes whose working directory is dir.
func processesIn(dir string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err == nil && cwd == dir {
			pids = append(pids, pid)
		}
	}
	return pids
}
