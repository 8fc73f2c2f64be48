package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// An MCP server's progress reaches the person (issue 32.3): the model
// calls server-everything's long-running operation (three steps of 0.1 s),
// and `astrid -p` prints the server's progress reports on stderr, in one
// process and through a daemon.
func TestPromptShowsAnMCPToolsProgress(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an MCP server and a daemon")
	}
	everything := mcpCapsule(t, "everything", "everything")
	var mu sync.Mutex
	var requests int
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		requests++
		first := requests%2 == 1 // each turn: the call, then the answer
		mu.Unlock()
		if first {
			writeOpenAIToolCall(w, "call_slow", "everything__trigger-long-running-operation", `{"duration":0.3,"steps":3}`)
		} else {
			writeOpenAIAnswer(w, "done")
		}
	}))
	defer model.Close()
	home, ws := t.TempDir(), t.TempDir()
	t.Setenv("OPENAI_BASE_URL", model.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "")
	if out, code := runProcess(t, home, "capsule", "install", everything, "--yes", "--accept-risk"); code != 0 {
		t.Fatalf("install: exit %d\n%s", code, out)
	}
	prompt := func(args ...string) string {
		t.Helper()
		cmd := astridProcess(home, append([]string{"-p", "take your time", "--provider", "openai", "--model", "test-model", "--workspace", ws}, args...)...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil || stdout.String() != "done\n" {
			t.Fatalf("-p %v: %v: stdout %q, stderr:\n%s", args, err, stdout.String(), stderr.String())
		}
		return stderr.String()
	}
	// In one process the events come on one route: the call, its last
	// progress report (a stdio call's answer waits for the reports read
	// before it; closer ones than 100 ms apart may be dropped, never the
	// last), then its result.
	s := prompt("--no-daemon")
	started := strings.Index(s, "→ everything:trigger-long-running-operation")
	last := strings.Index(s, "… everything:trigger-long-running-operation: 3/3")
	finished := strings.Index(s, "✓ everything:trigger-long-running-operation")
	if started < 0 || last < started || finished < last {
		t.Fatalf("stderr does not show the call, its last progress report, then its result:\n%s", s)
	}
	// Through a daemon progress comes on a route of its own (the turn's
	// events are matched by turn id, and progress names none), so only
	// the first report, 0.2 s ahead of the result, is sure to come
	// before the turn ends.
	startedPid(t, home, ws)
	t.Cleanup(func() { runProcess(t, home, "stop") })
	if s := prompt(); !strings.Contains(s, "… everything:trigger-long-running-operation: 1/3") {
		t.Fatalf("through the daemon stderr shows no progress:\n%s", s)
	}
}
