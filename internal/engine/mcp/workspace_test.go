package mcp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/internal/sandbox"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

// grantedManifest is fakeManifest's capsule granted the workspace (`*`)
// to read and write, as a file server's capsule would be.
func grantedManifest(t *testing.T) *manifest.Manifest {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf(`
[package]
name = "fake-capsule"
version = "0.1.0"
description = "A fake MCP capsule granted the workspace"

[capabilities]
host_process = [%q]
fs_read = ["*"]
fs_write = ["*"]

[[mcp_server]]
id = "fake"
type = "stdio"
command = %q
`, exe, exe)
	m, diags := manifest.Parse([]byte(src), "Capsule.toml", t.TempDir())
	if err := diags.Err(false); err != nil {
		t.Fatal(err)
	}
	return m
}

// openScope opens a request scope on ws for the default principal, as
// the uplink does for a client's hello.
func (r *rig) openScope(ws string) uint64 {
	return r.scopes.Open(host.Scope{Principal: ipc.DefaultPrincipal, Workspace: ws})
}

// where asks the server of scope's workspace for its working directory
// and pid.
func (r *rig) where(scope uint64, callID string) (string, int) {
	r.t.Helper()
	res := r.roundTripIn(scope, "fake:where", callID, `{}`)
	i := strings.LastIndexByte(res.Content, ' ')
	pid, err := strconv.Atoi(res.Content[i+1:])
	if res.IsError || i < 0 || err != nil {
		r.t.Fatalf("where (%s): %+v\nlogs:\n%s", callID, res, r.logs)
	}
	return res.Content[:i], pid
}

// callsOn is how many calls use or wait for the server of ws.
func (e *Engine) callsOn(ws string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if ss := e.scoped[scopeKey{principal: ipc.DefaultPrincipal, workspace: ws}]; ss != nil {
		return ss.calls
	}
	return -1
}

// Two requests in two workspaces reach one capsule's server: each call
// runs in a server started in its own workspace (its working directory,
// where a relative write lands), confined to the grants resolved for that
// workspace, and reused by the workspace's later calls; a call without a
// scope reaches the load-time server in the kernel's workspace. Unload
// stops every one of them.
func TestEachWorkspaceGetsItsOwnServer(t *testing.T) {
	r := newRig(t, grantedManifest(t), Options{})
	a, b := realTempDir(t), realTempDir(t)
	sa, sb := r.openScope(a), r.openScope(b)

	homeDir, homePID := r.where(0, "home")
	if homeDir != r.ws || homePID != r.engine.PID() {
		t.Fatalf("unscoped call ran in %s (pid %d), want the load-time server in %s (pid %d)", homeDir, homePID, r.ws, r.engine.PID())
	}
	aDir, aPID := r.where(sa, "a1")
	bDir, bPID := r.where(sb, "b1")
	if aDir != a || bDir != b {
		t.Fatalf("servers ran in %s and %s, want %s and %s", aDir, bDir, a, b)
	}
	if aPID == homePID || bPID == homePID || aPID == bPID {
		t.Fatalf("pids: home %d, a %d, b %d: want one server each", homePID, aPID, bPID)
	}
	if _, again := r.where(sa, "a2"); again != aPID {
		t.Fatalf("the second call in %s reached pid %d, want the first's %d", a, again, aPID)
	}
	if ws := r.engine.Workspaces(); len(ws) != 2 || !slices.Contains(ws, a) || !slices.Contains(ws, b) {
		t.Fatalf("workspaces with servers: %v", ws)
	}

	for scope, text := range map[uint64]string{sa: "A", sb: "B"} {
		if res := r.roundTripIn(scope, "fake:write", "write-"+text, `{"text":"`+text+`"}`); res.IsError {
			t.Fatalf("write %s: %+v", text, res)
		}
	}
	for ws, want := range map[string]string{a: "A", b: "B"} {
		if got, err := os.ReadFile(filepath.Join(ws, "where.txt")); err != nil || string(got) != want {
			t.Fatalf("%s/where.txt = %q, %v; want %q", ws, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(r.ws, "where.txt")); !os.IsNotExist(err) {
		t.Fatalf("a write landed in the kernel's workspace (%v)", err)
	}

	// The OS holds each server to its own workspace's grants: `*` is a
	// for a's server, so b is out of its reach, and the kernel's server
	// cannot reach a.
	if err := sandbox.Need(sandbox.ABI()); err == nil {
		for _, tt := range []struct {
			scope uint64
			path  string
		}{{sa, filepath.Join(b, "from-a.txt")}, {0, filepath.Join(a, "from-home.txt")}} {
			res := r.roundTripIn(tt.scope, "fake:write", "cross", fmt.Sprintf(`{"text":"x","path":%q}`, tt.path))
			if !res.IsError || !strings.Contains(res.Content, "permission denied") {
				t.Fatalf("write of %s: %+v, want permission denied", tt.path, res)
			}
			if _, err := os.Stat(tt.path); !os.IsNotExist(err) {
				t.Fatalf("%s was written (%v)", tt.path, err)
			}
		}
	} else {
		t.Logf("confinement not checked: %v", err)
	}

	if err := r.comp.Unload(context.Background()); err != nil {
		t.Fatal(err)
	}
	testutil.NoProcess(t, homePID, aPID, bPID)
	if n := KillAll(); n != 0 {
		t.Fatalf("KillAll found %d groups after Unload", n)
	}
	if ws := r.engine.Workspaces(); len(ws) != 0 {
		t.Fatalf("workspaces after Unload: %v", ws)
	}
}

// Calls that arrive while a workspace's server is starting wait for that
// start: one server, whose pid every call sees. The dispatcher hands one
// principal's calls to a capsule one at a time, so the calls ask the
// engine at once below it (serverOf, what each call's serverFor does once
// it knows the workspace); then calls queued on the bus while a start is
// held all reach the one server. Unload while a start is held leaves no
// process and no caller waiting.
func TestConcurrentFirstCallsStartOneServer(t *testing.T) {
	r := newRig(t, grantedManifest(t), Options{})
	ws := realTempDir(t)
	hold := filepath.Join(ws, holdFile)
	writeFile(t, hold, "", 0o600)
	const n = 8
	type got struct {
		s       *server
		release func()
		err     error
	}
	results := make(chan got, n)
	for range n {
		go func() {
			s, release, err := r.engine.serverOf(context.Background(), scopeKey{principal: ipc.DefaultPrincipal, workspace: ws})
			results <- got{s, release, err}
		}()
	}
	held := testutil.PidFile(t, hangGuard, filepath.Join(ws, pidFile))
	waitFor(t, "every call to wait for the one start", func() bool { return r.engine.callsOn(ws) == n })
	if err := os.Remove(hold); err != nil {
		t.Fatal(err)
	}
	var first *server
	for range n {
		g := <-results
		if g.err != nil {
			t.Fatalf("serverOf: %v", g.err)
		}
		if first == nil {
			first = g.s
		}
		if g.s != first || g.s.pid != held[0] {
			t.Fatalf("calls got servers %d and %d, want the one started (%d)", first.pid, g.s.pid, held[0])
		}
		g.release()
	}
	if c := r.engine.callsOn(ws); c != 0 {
		t.Fatalf("%d calls still counted on the server after every release", c)
	}

	// Through the bus: calls queued while another workspace's start is
	// held are answered by its one server.
	other := realTempDir(t)
	writeFile(t, filepath.Join(other, holdFile), "", 0o600)
	s := r.openScope(other)
	for i := range 3 {
		r.callIn(s, "fake:where", "queued-"+strconv.Itoa(i), `{}`)
	}
	otherPID := testutil.PidFile(t, hangGuard, filepath.Join(other, pidFile))
	if err := os.Remove(filepath.Join(other, holdFile)); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		_, _, res := r.result()
		if want := other + " " + strconv.Itoa(otherPID[0]); res.Result.IsError || res.Result.Content != want {
			t.Fatalf("result %+v, want %q", res, want)
		}
	}
	r.noMoreResults()
	if got := strings.Count(r.logs.String(), "mcp server started for a request's workspace"); got != 2 {
		t.Fatalf("%d servers started for 2 workspaces\nlogs:\n%s", got, r.logs)
	}

	// A third workspace's start, held, then the capsule unloads.
	third := realTempDir(t)
	writeFile(t, filepath.Join(third, holdFile), "", 0o600)
	r.callIn(r.openScope(third), "fake:where", "unloaded", `{}`)
	starting := testutil.PidFile(t, hangGuard, filepath.Join(third, pidFile))
	if err := r.comp.Unload(context.Background()); err != nil {
		t.Fatal(err)
	}
	testutil.NoProcess(t, append(append(held, otherPID...), starting...)...)
	if _, _, res := r.result(); res.CallID != "unloaded" || !res.Result.IsError {
		t.Fatalf("the call whose server was starting got %+v, want an error result", res)
	}
	if n := KillAll(); n != 0 {
		t.Fatalf("KillAll found %d groups after Unload", n)
	}
}

// A server that cannot start in the request's workspace answers that call
// with an error naming the workspace, at once, and the call does not fall
// back to the kernel's server; the next call tries again. A request whose
// scope closed (its client left) gets no server at all.
func TestWorkspaceServerThatCannotStart(t *testing.T) {
	r := newRig(t, grantedManifest(t), Options{})
	gone := realTempDir(t)
	s := r.openScope(gone)
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	res := r.roundTripIn(s, "fake:write", "nowhere", `{"text":"lost"}`)
	if !res.IsError || !strings.Contains(res.Content, "in workspace "+gone) {
		t.Fatalf("call in a deleted workspace: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(r.ws, "where.txt")); !os.IsNotExist(err) {
		t.Fatalf("the call fell back to the kernel's workspace (%v)", err)
	}
	if ws := r.engine.Workspaces(); len(ws) != 0 {
		t.Fatalf("a failed start is kept: %v", ws)
	}
	// The directory is back: the next call starts the server.
	if err := os.Mkdir(gone, 0o700); err != nil {
		t.Fatal(err)
	}
	if dir, _ := r.where(s, "back"); dir != gone {
		t.Fatalf("after the directory came back the call ran in %s", dir)
	}

	closed := r.openScope(realTempDir(t))
	r.scopes.Close(closed)
	res = r.roundTripIn(closed, "fake:echo", "closed", `{"text":"x"}`)
	if !res.IsError || !strings.Contains(res.Content, "no longer open") {
		t.Fatalf("call in a closed scope: %+v", res)
	}
}

// Servers of request workspaces are bounded: starting one more than
// MaxWorkspaces stops the least recently used idle one, and a server
// without a call for IdleTimeout stops.
func TestWorkspaceServersAreBounded(t *testing.T) {
	t.Run("least recently used", func(t *testing.T) {
		r := newRig(t, grantedManifest(t), Options{MaxWorkspaces: 2})
		a, b, c := realTempDir(t), realTempDir(t), realTempDir(t)
		sa, sb, sc := r.openScope(a), r.openScope(b), r.openScope(c)
		_, aPID := r.where(sa, "a")
		_, bPID := r.where(sb, "b")
		waitFor(t, "both calls to let their servers go", func() bool { return r.engine.callsOn(a) == 0 && r.engine.callsOn(b) == 0 })
		r.where(sc, "c")
		waitFor(t, "a's server to stop", func() bool { return !alive(aPID) })
		if ws := r.engine.Workspaces(); len(ws) != 2 || !slices.Contains(ws, b) || !slices.Contains(ws, c) {
			t.Fatalf("workspaces with servers: %v, want %s and %s", ws, b, c)
		}
		if !alive(bPID) {
			t.Fatalf("b's server %d stopped, a's was the least recently used", bPID)
		}
		if dir, pid := r.where(sa, "a-again"); dir != a || pid == aPID {
			t.Fatalf("a's next call ran in %s, pid %d (the stopped one was %d)", dir, pid, aPID)
		}
	})
	t.Run("idle", func(t *testing.T) {
		r := newRig(t, grantedManifest(t), Options{IdleTimeout: time.Millisecond})
		ws := realTempDir(t)
		_, pid := r.where(r.openScope(ws), "once")
		waitFor(t, "the idle server to stop", func() bool { return len(r.engine.Workspaces()) == 0 && !alive(pid) })
		if r.engine.PID() == 0 {
			t.Fatal("the load-time server stopped with the idle one")
		}
	})
}
