package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/astrid-go/astrid/internal/daemonclient"
	"github.com/astrid-go/astrid/internal/sessionclient"
	"github.com/astrid-go/astrid/internal/uplinkwire"
)

// noProviderEnv blanks the provider variables of the test's own
// environment, so that only what a test sets reaches a process.
var noProviderEnv = []string{"OPENAI_API_KEY=", "OPENAI_BASE_URL=", "ANTHROPIC_API_KEY=", "ANTHROPIC_BASE_URL="}

// startDaemonIn starts a daemon for home working on ws with no provider
// settings in its environment, and returns its pid once its socket serves.
func startDaemonIn(t *testing.T, home, ws string) int {
	t.Helper()
	cmd := astridProcess(home, "start", "--workspace", ws)
	cmd.Env = append(cmd.Env, noProviderEnv...)
	b, err := cmd.CombinedOutput()
	out := string(b)
	if code := exitStatus(t, err); code != 0 || !strings.HasPrefix(out, "astrid daemon started (pid ") {
		t.Fatalf("start: exit %d: %s", code, out)
	}
	pid, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(out), "astrid daemon started (pid "), ")"))
	if err != nil {
		t.Fatalf("start printed %q", out)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	logDaemonOnFailure(t, home)
	return pid
}

// logDaemonOnFailure logs the tail of home's daemon log when t fails: a
// daemon test that fails in CI is diagnosed from CI's output alone.
func logDaemonOnFailure(t *testing.T, home string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		b, err := os.ReadFile(filepath.Join(home, "logs", "daemon.log"))
		if err != nil {
			t.Logf("daemon log: %v", err)
			return
		}
		const tail = 16 << 10
		if len(b) > tail {
			b = b[len(b)-tail:]
		}
		t.Logf("daemon log (last %d bytes):\n%s", len(b), b)
	})
}

// clientRun is one client process: its exit status and what it printed.
type clientRun struct {
	code           int
	stdout, stderr string
}

// runClient runs `astrid args...` against home in dir with env added.
func runClient(t *testing.T, home, dir string, env []string, args ...string) clientRun {
	t.Helper()
	cmd := astridProcess(home, args...)
	cmd.Dir = dir
	cmd.Env = append(append(cmd.Env, noProviderEnv...), env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return clientRun{code: exitStatus(t, err), stdout: stdout.String(), stderr: stderr.String()}
}

// together runs the functions at once and waits for all of them.
func together(fns ...func()) {
	var wg sync.WaitGroup
	for _, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn()
		}()
	}
	wg.Wait()
}

// keyEcho is a fake OpenAI-compatible server whose every answer is the
// Authorization header it received, and which keeps each request's body
// by that header.
type keyEcho struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies map[string][]string // Authorization → request bodies
}

func newKeyEcho(t *testing.T) *keyEcho {
	k := &keyEcho{bodies: map[string][]string{}}
	k.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		auth := r.Header.Get("Authorization")
		k.mu.Lock()
		k.bodies[auth] = append(k.bodies[auth], string(b))
		k.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, openAIChunk(`{"role":"assistant","content":"key: `+strings.TrimPrefix(auth, "Bearer ")+`"}`, "null"))
		io.WriteString(w, openAIChunk(`{}`, `"stop"`))
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(k.srv.Close)
	return k
}

func (k *keyEcho) url() string { return k.srv.URL + "/v1" }

// bodiesOf are the request bodies that came with Authorization auth.
func (k *keyEcho) bodiesOf(auth string) []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.bodies[auth]...)
}

// Two clients in two projects against one daemon (DESIGN §4a, §8): each
// one's writes land in its own directory (the current one, or
// --workspace), never the daemon's or the other's; each turn's prompt
// carries its own AGENTS.md; the provider keys each gives are used by its
// own turns only, at the same time (checked on the headers the fake
// provider received), never one client's for another; a client with a
// base URL and no key sends no key.
func TestDaemonServesEachCallersWorkspaceAndKeys(t *testing.T) {
	home, daemonWS, wsA, wsB := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	for ws, rules := range map[string]string{wsA: "Rules of project A.", wsB: "Rules of project B."} {
		if err := os.WriteFile(filepath.Join(ws, "AGENTS.md"), []byte(rules+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(wsA, "only-in-a.txt"), []byte("A's own"), 0o600); err != nil {
		t.Fatal(err)
	}
	startDaemonIn(t, home, daemonWS)

	write := func(content string) []string {
		return []string{"tool", "call", "write_file", `{"file_path":"where.txt","content":"` + content + `"}`, "--yes"}
	}
	var a, b clientRun
	together(
		func() { a = runClient(t, home, wsA, nil, write("A")...) },
		// From A's directory, but naming B's: the flag wins.
		func() { b = runClient(t, home, wsA, nil, append(write("B"), "--workspace", wsB)...) },
	)
	if a.code != 0 || b.code != 0 {
		t.Fatalf("writes: A exit %d %s; B exit %d %s", a.code, a.stderr, b.code, b.stderr)
	}
	for ws, want := range map[string]string{wsA: "A", wsB: "B"} {
		if got, err := os.ReadFile(filepath.Join(ws, "where.txt")); err != nil || string(got) != want {
			t.Fatalf("%s/where.txt = %q, %v; want %q", ws, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(daemonWS, "where.txt")); !os.IsNotExist(err) {
		t.Fatalf("a write landed in the daemon's workspace (%v)", err)
	}
	read := []string{"tool", "call", "read_file", `{"file_path":"only-in-a.txt"}`}
	if r := runClient(t, home, wsA, nil, read...); r.code != 0 || r.stdout != "A's own\n" {
		t.Fatalf("A reads its file: %+v", r)
	}
	if r := runClient(t, home, wsB, nil, read...); r.code != 1 || strings.Contains(r.stdout, "A's own") {
		t.Fatalf("B reads A's file: %+v", r)
	}

	fake := newKeyEcho(t)
	prompt := []string{"-p", "hello", "--provider", "openai", "--model", "test-model"}
	together(
		func() {
			a = runClient(t, home, wsA, []string{"OPENAI_API_KEY=key-A", "OPENAI_BASE_URL=" + fake.url()}, prompt...)
		},
		func() {
			b = runClient(t, home, wsB, []string{"OPENAI_API_KEY=key-B", "OPENAI_BASE_URL=" + fake.url()}, prompt...)
		},
	)
	if a.code != 0 || a.stdout != "key: key-A\n" || b.code != 0 || b.stdout != "key: key-B\n" {
		t.Fatalf("turns with their own keys: A %+v; B %+v", a, b)
	}
	for auth, want := range map[string]string{"Bearer key-A": "Rules of project A.", "Bearer key-B": "Rules of project B."} {
		bodies := fake.bodiesOf(auth)
		if len(bodies) != 1 || !strings.Contains(bodies[0], want) || strings.Contains(bodies[0], "Rules of project "+map[string]string{"Bearer key-A": "B", "Bearer key-B": "A"}[auth]) {
			t.Fatalf("requests with %s: %q (want one, holding %q only)", auth, bodies, want)
		}
	}
	// A base URL alone: no key goes with it (neither A's nor B's).
	if c := runClient(t, home, wsA, []string{"OPENAI_BASE_URL=" + fake.url()}, prompt...); c.code != 0 || strings.Contains(c.stdout, "key-") {
		t.Fatalf("a turn without a key: %+v", c)
	}
	// Nothing set: the provider says it has no key, as in-process.
	if c := runClient(t, home, wsA, nil, "-p", "hello", "--provider", "openai"); c.code != 1 || !strings.Contains(c.stderr, "astrid capsule env set astrid-capsule-openai api_key") {
		t.Fatalf("a turn with no settings at all: %+v", c)
	}
}

// The bad input of a request's workspace and settings gets a clear answer
// from the client and, when a client skips its own checks, from the
// daemon: a workspace that does not exist, is a file or lies in
// $ASTRID_HOME; a current directory that was deleted; a key with a line
// break. A workspace that holds $ASTRID_HOME (~ holds ~/.astrid) is
// fine, and the home stays out of reach through it. A daemon restarted
// between a client's requests serves the next one in the client's own
// directory; settings stored with `capsule env set` apply when the
// variables are absent, and a stored key never goes to a base URL the
// client chose.
func TestRequestWorkspaceAndSettingsBadInput(t *testing.T) {
	parent := t.TempDir()
	home, ws := filepath.Join(parent, "astrid-home"), t.TempDir()
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ASTRID_HOME", home)
	file := filepath.Join(ws, "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	startDaemonIn(t, home, ws)

	read := []string{"tool", "call", "read_file", `{"file_path":"a-file"}`}
	for _, c := range []struct {
		name, workspace, want string
	}{
		{"missing", filepath.Join(ws, "no-such-dir"), "does not exist"},
		{"a file", file, "is not a directory"},
		{"in the home", filepath.Join(home, "capsules"), "lies in Astrid's home"},
		{"the home", home, "lies in Astrid's home"},
	} {
		_ = os.MkdirAll(filepath.Join(home, "capsules"), 0o700)
		for _, noDaemon := range []bool{false, true} {
			args := append(append([]string(nil), read...), "--workspace", c.workspace)
			if noDaemon {
				args = append([]string{"--no-daemon"}, args...)
			}
			if r := runClient(t, home, ws, nil, args...); r.code != 2 || !strings.Contains(r.stderr, c.want) {
				t.Errorf("--workspace %s (no daemon %v): %+v, want exit 2 saying %q", c.name, noDaemon, r, c.want)
			}
		}
		// The daemon's own check, for a client that skips its own.
		_, err := daemonclient.Dial(context.Background(), home, daemonclient.Options{Workspace: c.workspace})
		var de *daemonclient.Error
		if !errors.As(err, &de) || de.Code != uplinkwire.CodeWorkspace || !strings.Contains(de.Message, c.want) {
			t.Errorf("a hello with the workspace %s: %v, want a %q error saying %q", c.name, err, uplinkwire.CodeWorkspace, c.want)
		}
	}
	_, err := daemonclient.Dial(context.Background(), home, daemonclient.Options{Workspace: ws, Env: map[string]string{"OPENAI_API_KEY": "sk-one\nsk-two"}})
	var de *daemonclient.Error
	if !errors.As(err, &de) || de.Code != uplinkwire.CodeSettings || strings.Contains(de.Message, "sk-") {
		t.Errorf("a hello with a key holding a line break: %v", err)
	}
	_, err = daemonclient.Dial(context.Background(), home, daemonclient.Options{Workspace: ws, Env: map[string]string{"HOME": "/"}})
	if !errors.As(err, &de) || de.Code != uplinkwire.CodeSettings {
		t.Errorf("a hello with another variable: %v", err)
	}
	if r := runClient(t, home, ws, []string{"OPENAI_API_KEY=sk-one\nsk-two"}, read...); r.code != 2 || !strings.Contains(r.stderr, "OPENAI_API_KEY holds a line break") || strings.Contains(r.stderr, "sk-") {
		t.Errorf("a key with a line break: %+v", r)
	}
	// A trailing line break (a key read from a file) is no problem.
	if r := runClient(t, home, ws, []string{"OPENAI_API_KEY=sk-one\n"}, read...); r.code != 0 || r.stdout != "x\n" {
		t.Errorf("a key with a trailing line break: %+v", r)
	}

	// A current directory that was deleted.
	gone := filepath.Join(t.TempDir(), "gone")
	if err := os.Mkdir(gone, 0o700); err != nil {
		t.Fatal(err)
	}
	sh := exec.Command("/bin/sh", "-c", `cd "$GONE" && rmdir "$GONE" && exec "$BIN" tool call read_file '{"file_path":"a-file"}'`)
	sh.Env = append(os.Environ(), "ASTRID_TEST_RUN_MAIN=1", "ASTRID_HOME="+home, "GONE="+gone, "BIN="+os.Args[0])
	out, err := sh.CombinedOutput()
	if code := exitStatus(t, err); code != 2 || !strings.Contains(string(out), "the current directory no longer exists") {
		t.Errorf("a deleted current directory: exit %d: %s", code, out)
	}

	// A workspace holding $ASTRID_HOME is served; the home stays out of
	// reach through it.
	if r := runClient(t, home, parent, nil, "tool", "call", "read_file", `{"file_path":"astrid-home/run/astrid.pid"}`); r.code != 1 || !strings.Contains(r.stdout+r.stderr, "Astrid's home") {
		t.Errorf("reading the daemon's pid file through a workspace holding the home: %+v", r)
	}

	// The daemon restarts between two requests of a client: the next one
	// is served in the client's own directory, with the stored settings.
	if out, code := runProcess(t, home, "stop"); code != 0 {
		t.Fatalf("stop: exit %d: %s", code, out)
	}
	fake := newKeyEcho(t)
	if _, errOut, code := runAstrid(t, "key-S", "capsule", "env", "set", "astrid-capsule-openai", "api_key"); code != 0 {
		t.Fatalf("env set api_key: exit %d: %s", code, errOut)
	}
	startDaemonIn(t, home, t.TempDir())
	prompt := []string{"-p", "hello", "--provider", "openai", "--model", "test-model"}
	// A base URL the client chose: the stored key does not go there; the
	// client's own does.
	if r := runClient(t, home, ws, []string{"OPENAI_BASE_URL=" + fake.url()}, prompt...); r.code != 0 || strings.Contains(r.stdout, "key-S") || len(fake.bodiesOf("Bearer key-S")) != 0 {
		t.Errorf("a client's base URL with the stored key: %+v", r)
	}
	if r := runClient(t, home, ws, []string{"OPENAI_BASE_URL=" + fake.url(), "OPENAI_API_KEY=key-F"}, prompt...); r.code != 0 || r.stdout != "key: key-F\n" {
		t.Errorf("a client's base URL and key: %+v", r)
	}
	if r := runClient(t, home, ws, nil, read...); r.code != 0 || r.stdout != "x\n" {
		t.Errorf("a tool call after the restart: %+v", r)
	}
	if out, code := runProcess(t, home, "stop"); code != 0 {
		t.Fatalf("stop: exit %d: %s", code, out)
	}
	if _, errOut, code := runAstrid(t, fake.url(), "capsule", "env", "set", "astrid-capsule-openai", "base_url"); code != 0 {
		t.Fatalf("env set base_url: exit %d: %s", code, errOut)
	}
	startDaemonIn(t, home, t.TempDir())
	// The variables absent: the stored settings apply.
	if r := runClient(t, home, ws, nil, prompt...); r.code != 0 || r.stdout != "key: key-S\n" {
		t.Errorf("the stored settings: %+v", r)
	}
}

// A session remembers its workspace: continued with --session from another
// directory, the turn says so and works on the session's (its README, not
// the current directory's), through the daemon and in-process alike.
func TestSessionContinuedFromAnotherDirectoryWorksOnItsOwn(t *testing.T) {
	promptHome(t, "")
	home := os.Getenv("ASTRID_HOME")
	wsA, wsB := t.TempDir(), t.TempDir()
	for ws, text := range map[string]string{wsA: "# Project A\n", wsB: "# Project B\n"} {
		if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, viaDaemon := range []bool{false, true} {
		var pre []string
		if viaDaemon {
			startDaemonIn(t, home, t.TempDir())
		} else {
			pre = []string{"--no-daemon"}
		}
		first := runClient(t, home, wsA, nil, append(pre, "-p", "What does README.md say?")...)
		if first.code != 0 || !strings.Contains(first.stderr, "# Project A") {
			t.Fatalf("daemon %v: the first turn: %+v", viaDaemon, first)
		}
		sd := sessionNamed(t, first.stderr)
		again := runClient(t, home, wsB, nil, append(pre, "-p", "What does README.md say?", "--session", sd)...)
		wsAReal, _ := filepath.EvalSymlinks(wsA)
		if again.code != 0 || !strings.Contains(again.stderr, "session "+sd+" works on "+wsAReal) || !strings.Contains(again.stderr, "# Project A") || strings.Contains(again.stderr, "# Project B") {
			t.Fatalf("daemon %v: the session continued from B: %+v", viaDaemon, again)
		}
		if viaDaemon {
			if out, code := runProcess(t, home, "stop"); code != 0 {
				t.Fatalf("stop: exit %d: %s", code, out)
			}
		}
	}
}

// Through the daemon, -p records its new session's workspace before it
// exits: the next command, started the moment the first exits, already
// finds it — --continue resumes it there and not in another workspace, and
// session list shows it.
func TestDaemonRecordsANewSessionsWorkspaceBeforeTheNextCommand(t *testing.T) {
	promptHome(t, "")
	home := os.Getenv("ASTRID_HOME")
	wsA, wsB := t.TempDir(), t.TempDir()
	for _, ws := range []string{wsA, wsB} {
		if err := os.WriteFile(filepath.Join(ws, "README.md"), []byte("# Project\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	startDaemonIn(t, home, t.TempDir())
	for round := range 3 {
		first := runClient(t, home, wsA, nil, "-p", "What does README.md say?")
		if first.code != 0 {
			t.Fatalf("round %d: the first turn: %+v", round, first)
		}
		sd := sessionNamed(t, first.stderr)
		again := runClient(t, home, wsA, nil, "-p", "What does README.md say?", "--continue")
		if again.code != 0 || sessionNamed(t, again.stderr) != sd {
			t.Fatalf("round %d: --continue right after %s: %+v", round, sd, again)
		}
		if other := runClient(t, home, wsB, nil, "-p", "hello", "--continue"); other.code != 2 {
			t.Fatalf("round %d: --continue in another workspace: %+v", round, other)
		}
	}
	list := runClient(t, home, wsA, nil, "session", "list", "--json")
	var sessions []sessionclient.Summary
	if list.code != 0 || json.Unmarshal([]byte(list.stdout), &sessions) != nil || len(sessions) != 3 {
		t.Fatalf("session list: %+v", list)
	}
	wsAReal, _ := filepath.EvalSymlinks(wsA)
	for _, s := range sessions {
		if s.Workspace != wsAReal {
			t.Errorf("session %s records workspace %q, want %q", s.SessionID, s.Workspace, wsAReal)
		}
	}
}
