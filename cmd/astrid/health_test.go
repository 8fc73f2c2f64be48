package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/astrid-go/astrid/internal/daemon"
	"github.com/astrid-go/astrid/internal/runtime"
	"github.com/astrid-go/astrid/internal/testutil"
)

// A capsule failing in a tight loop (its MCP server exits at once) is
// restarted by the daemon's health monitor max_restarts times, each
// attempt and the give-up in capsule list, status, the log and the web
// view; the daemon answers throughout; the healthy capsule beside it is
// never restarted.
func TestDaemonRestartsAFailedCapsuleThenGivesUp(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	cfg := "[health]\nmax_restarts = 3\nrestart_backoff = \"100ms\"\nmax_restart_backoff = \"400ms\"\n"
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	writeCapsule(t, src, map[string]string{"Capsule.toml": `[package]
name = "crashy"
version = "0.1.0"

[capabilities]
host_process = ["sh"]

[[mcp_server]]
id = "crashy"
type = "stdio"
command = "sh"
args = ["-c", "exit 3"]
`})
	if out, code := runProcess(t, home, "capsule", "install", src, "--yes", "--accept-risk"); code != 0 {
		t.Fatalf("install: exit %d:\n%s", code, out)
	}
	notes := t.TempDir()
	writeCapsule(t, notes, map[string]string{"Capsule.toml": notesManifest, "notes.md": "steady notes"})
	if out, code := runProcess(t, home, "capsule", "install", notes, "--yes"); code != 0 {
		t.Fatalf("install notes: exit %d:\n%s", code, out)
	}
	pid := startedPid(t, home, ws)
	t.Cleanup(func() { runProcess(t, home, "stop") })

	capsuleOf := func(id string) runtime.Status {
		t.Helper()
		out, _ := runProcess(t, home, "capsule", "list", "--json")
		var list []runtime.Status
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("capsule list --json: %v: %s", err, out)
		}
		for _, s := range list {
			if s.ID == id {
				return s
			}
		}
		t.Fatalf("no capsule %s in %s", id, out)
		return runtime.Status{}
	}
	// While it fails and is restarted, the daemon answers: a tool call,
	// then each capsule list below (a query over its socket).
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("still serving"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := runProcess(t, home, "tool", "call", "read_file", `{"file_path":"a.txt"}`, "--workspace", ws); code != 0 || !strings.Contains(out, "still serving") {
		t.Errorf("a tool call while a capsule is restarted: exit %d: %s", code, out)
	}
	var seen []string
	testutil.WaitFor(t, daemonPatience, "the monitor to give up on crashy", func() bool {
		s := capsuleOf("crashy")
		if s.Error != "" && (len(seen) == 0 || seen[len(seen)-1] != s.Error[:min(len(s.Error), 15)]) {
			seen = append(seen, s.Error[:min(len(s.Error), 15)])
		}
		return s.GaveUp
	})
	s := capsuleOf("crashy")
	if s.State != "failed" || s.Restarts != 3 || !strings.HasPrefix(s.Error, "gave up after 3 restarts: ") {
		t.Fatalf("crashy after the give-up: %+v", s)
	}
	if n := capsuleOf("notes"); n.State != "ready" || n.Restarts != 0 {
		t.Errorf("the healthy capsule: %+v", n)
	}
	t.Logf("errors seen on the way: %q", seen)

	out, code := runProcess(t, home, "status")
	if code != 0 || !strings.Contains(out, "gave up after 3 restarts") {
		t.Errorf("status does not show the give-up: exit %d:\n%s", code, out)
	}
	text, code := runProcess(t, home, "capsule", "list")
	if code != 1 || !strings.Contains(text, "crashy: gave up after 3 restarts") {
		t.Errorf("capsule list: exit %d:\n%s", code, text)
	}

	log, err := os.ReadFile(daemon.PathsOf(home).Log)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(log), "restarting failed capsule"); n != 3 || !strings.Contains(string(log), "capsule failed; gave up restarting it") {
		t.Errorf("the log has %d restart attempts (want 3) and the give-up %v", n, strings.Contains(string(log), "gave up restarting"))
	}

	info, err := daemon.ReadAdmin(home)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, strings.TrimSuffix(info.BaseURL, "/")+"/api/graph", nil)
	req.Header.Set("Authorization", "Bearer "+info.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "gave up after 3 restarts") {
		t.Errorf("the web view's graph (HTTP %d) does not show the give-up: %.500s", resp.StatusCode, body)
	}

	// SIGHUP (a reload from outside) starts the count afresh: three
	// more restarts, and a second give-up.
	if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, daemonPatience, "three more restarts after SIGHUP, and a second give-up", func() bool {
		log, _ := os.ReadFile(daemon.PathsOf(home).Log)
		return strings.Count(string(log), "restarting failed capsule") == 6 && strings.Count(string(log), "gave up restarting it") == 2
	})
	for _, e := range seen {
		if strings.HasPrefix(e, "restart 4") {
			t.Errorf("a restart beyond max_restarts was announced: %q", seen)
		}
	}
}
