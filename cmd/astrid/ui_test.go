package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/internal/webview/webviewtest"
)

// astrid ui with no daemon says so and how to start one, exit 3.
func TestUIWithoutDaemon(t *testing.T) {
	home := t.TempDir()
	out, code := runProcess(t, home, "ui")
	if code != exitNotRunning || !strings.Contains(out, "no daemon runs for "+home) || !strings.Contains(out, "astrid start") || strings.Contains(out, "http") {
		t.Fatalf("exit %d: %s", code, out)
	}
}

// The web view of a real daemon in a real browser: `astrid ui` prints its
// URL; the page shows the built-in capsules and the graph between them;
// while a replayed turn runs (its read_file waits on a FIFO) the page
// shows it running with its tool call, then ended with the call's timing,
// and the message flow of the topics it used; a screenshot is kept.
func TestUIBrowserShowsALiveTurn(t *testing.T) {
	ctx := webviewtest.Browser(t)
	home, ws := t.TempDir(), t.TempDir()
	t.Setenv("ASTRID_HOME", home)
	_, fifo := pendingFIFO(t, ws)
	script := filepath.Join(ws, "script.jsonl")
	if err := os.WriteFile(script, []byte(pipeScript), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runAstrid(t, script, "capsule", "env", "set", "astrid-capsule-replay", "script"); code != 0 {
		t.Fatalf("env set script: exit %d: %s", code, errOut)
	}
	startedPid(t, home, ws)
	defer runProcess(t, home, "stop")
	out, code := runProcess(t, home, "ui")
	url := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.Contains(url, "/?token=") || strings.Count(out, "\n") != 1 {
		t.Fatalf("astrid ui: exit %d: %q", code, out)
	}
	base, token, _ := strings.Cut(url, "?token=")
	if status, code := runProcess(t, home, "status"); code != 0 || !strings.Contains(status, "web view: "+base+" (astrid ui") || strings.Contains(status, token) {
		t.Fatalf("astrid status: exit %d, want the web view's address without its token:\n%s", code, status)
	}

	webviewtest.Do(t, ctx, "open the page", chromedp.Navigate(url))
	webviewtest.WaitTrue(t, ctx, "the live status", `document.getElementById('status').textContent === 'live'`)
	nodes := `[...document.querySelectorAll('#graph-nodes .node text')].map(e => e.textContent)`
	for _, id := range []string{"astrid-capsule-router", "astrid-capsule-fs", "astrid-capsule-react", "astrid-capsule-replay", "astrid-uplink", "astrid-daemon"} {
		webviewtest.WaitTrue(t, ctx, "the node "+id, nodes+`.includes('`+id+`')`)
	}
	if !webviewtest.Eval[bool](t, ctx, `document.querySelector('path.edges').getAttribute('d').split('M').length > 10`) {
		t.Fatal("the graph has hardly any edge")
	}
	// The router's grants: the high-risk tool_middleware.
	if !webviewtest.Eval[bool](t, ctx, `[...document.querySelectorAll('#capsules tr')].some(r => r.dataset.id === 'astrid-capsule-router' && r.textContent.includes('tool_middleware = true'))`) {
		t.Error("the capsules table does not show the router's tool_middleware grant")
	}

	prompt := astridProcess(home, "-p", "read the pipe", "--workspace", ws)
	stderr := &testutil.SyncBuffer{}
	prompt.Stderr = stderr
	if err := prompt.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = prompt.Process.Kill() }()
	webviewtest.WaitTrue(t, ctx, "the running turn and its pending tool call",
		`[...document.querySelectorAll('#turns .turn.running')].some(t => t.querySelector('.prompt').textContent === 'read the pipe' &&
			[...t.querySelectorAll('.tool')].some(c => c.textContent.startsWith('… read_file {"file_path":"pipe"} — running')))`)
	webviewtest.Screenshot(t, ctx, "webview-daemon-turn-running.png")

	if _, err := fifo.WriteString("what the pipe held"); err != nil {
		t.Fatal(err)
	}
	fifo.Close()
	if code := waitExit(t, prompt, stderr); code != 0 {
		t.Fatalf("astrid -p: exit %d: %s", code, stderr.String())
	}
	webviewtest.WaitTrue(t, ctx, "the ended turn with its timed tool call",
		`[...document.querySelectorAll('#turns .turn:not(.running)')].some(t => t.querySelector('.meta').textContent.includes('answer in ') &&
			[...t.querySelectorAll('.tool')].some(c => /^✓ read_file .* — \d+(\.\d)? m?s: what the pipe held/.test(c.textContent)))`)
	topics := `[...document.querySelectorAll('#topics tbody td:first-child')].map(e => e.textContent)`
	for _, topic := range []string{"user.v1.prompt", "tool.v1.request.execute", "agent.v1.tool.started", "agent.v1.response"} {
		webviewtest.WaitTrue(t, ctx, "the flow of "+topic, topics+`.includes('`+topic+`')`)
	}
	webviewtest.Screenshot(t, ctx, "webview-daemon-turn-ended.png")
}
