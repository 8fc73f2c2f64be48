package daemon

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/capsules/promptbuilder"
	"github.com/astrid-go/astrid/capsules/react"
	"github.com/astrid-go/astrid/capsules/replay"
	"github.com/astrid-go/astrid/capsules/router"
	"github.com/astrid-go/astrid/capsules/session"
	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
	"github.com/astrid-go/astrid/sdk"
)

// patience bounds every wait of these tests for something that happens in
// milliseconds: only a broken daemon reaches it.
const patience = time.Minute

const blockerManifest = `
[package]
name = "test-blocker"
version = "0.1.0"

[subscribe]
"tool.v1.request.describe" = { wit = "opaque", handler = "tool_describe" }
"tool.v1.execute.block" = { wit = "tool-execute-request", handler = "tool_execute_block" }

[publish]
"tool.v1.response.describe.test-blocker" = "opaque"
"tool.v1.execute.block.result" = "tool-execute-result"
`

// newBlocker's tool tells started that it runs, then waits until its call
// ends (a cancel, or the capsule's unload).
func newBlocker(started chan<- struct{}) func() *sdk.Capsule {
	return func() *sdk.Capsule {
		c := sdk.New("blocks until its call ends")
		sdk.Tool(c, "block", "waits", func(call *sdk.Call, _ struct{}) (string, error) {
			started <- struct{}{}
			<-call.Context().Done()
			return "", errors.New("interrupted")
		})
		return c
	}
}

// blockScript makes the replayed model call the blocking tool.
const blockScript = `{"match": {"user": "block"}}
{"ToolCallStart": {"id": "b1", "name": "block"}}
{"ToolCallDelta": {"id": "b1", "args_delta": "{}"}}
{"ToolCallEnd": {"id": "b1"}}
"Done"
`

type runningDaemon struct {
	k    *kernel.Kernel
	stop context.CancelFunc
	done chan error
	home string
}

// startDaemon runs a daemon in-process on a fresh home with the agent's
// capsules, the replay provider playing script, and extra built-ins.
func startDaemon(t *testing.T, script string, extra ...kernel.Builtin) *runningDaemon {
	t.Helper()
	return startDaemonWith(t, script, nil, extra...)
}

// startDaemonWith is startDaemon with a Reporter attached.
func startDaemonWith(t *testing.T, script string, rep *Reporter, extra ...kernel.Builtin) *runningDaemon {
	t.Helper()
	home, ws := t.TempDir(), t.TempDir()
	if script != "" {
		path := filepath.Join(ws, "script.jsonl")
		if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
			t.Fatal(err)
		}
		st, err := store.Open(config.Layout(home).State, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		m, _ := manifest.Parse(replay.Manifest, "Capsule.toml", "")
		if err := st.Config(m.ID()).Set("script", []byte(path)); err != nil {
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
	builtins := append([]kernel.Builtin{
		{Manifest: router.Manifest, New: router.New},
		{Manifest: session.Manifest, New: session.New},
		{Manifest: replay.Manifest, New: replay.New},
		{Manifest: promptbuilder.Manifest, New: promptbuilder.New},
		{Manifest: react.Manifest, New: react.New},
	}, extra...)
	ready := make(chan *kernel.Kernel, 1)
	ctx, stop := context.WithCancel(context.Background())
	d := &runningDaemon{stop: stop, done: make(chan error, 1), home: home}
	go func() {
		d.done <- Run(ctx, Options{
			Home: home, Workspace: ws, Config: config.Default(), Builtins: builtins,
			Frontends: []dispatch.CapsuleACL{agentclient.ACL()},
			Ready:     func(k *kernel.Kernel) { ready <- k },
			Reporter:  rep,
		})
	}()
	testutil.WaitFor(t, patience, "the daemon to be ready", func() bool {
		select {
		case d.k = <-ready:
			return true
		case err := <-d.done:
			t.Fatalf("daemon did not start: %v", err)
		default:
		}
		return false
	})
	t.Cleanup(func() {
		stop()
		<-d.done
	})
	return d
}

// startBlockedTurn starts a daemon with the blocking tool and, as alice,
// a turn (session s1) whose call to it is running when it returns; the turn
// is closed at the test's end.
func startBlockedTurn(t *testing.T) (*runningDaemon, *agentclient.Turn) {
	t.Helper()
	started := make(chan struct{}, 1)
	d := startDaemon(t, blockScript, kernel.Builtin{Manifest: []byte(blockerManifest), New: newBlocker(started)})
	turn, err := agentclient.Start(context.Background(), d.k.Frontend(), agentclient.Prompt{Principal: "alice", SessionID: "s1", Text: "block"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(turn.Close)
	testutil.WaitForRecv(t, patience, "the tool to run", started)
	return d, turn
}

// shutdown stops the daemon and returns Run's error.
func (d *runningDaemon) shutdown(t *testing.T) error {
	t.Helper()
	d.stop()
	err := testutil.WaitForRecv(t, patience, "the daemon to stop", d.done)
	d.done <- err // for the cleanup
	return err
}

// The daemon owns its home while it runs: the pid file names it, a second
// daemon is refused naming that pid, Running reports it; after a shutdown
// the run files are gone, the lock is free and the store opens at once.
func TestOneDaemonPerHomeAndCleanShutdown(t *testing.T) {
	d := startDaemon(t, "")
	p := PathsOf(d.home)
	pid, err := readPid(p.Pid)
	if err != nil || pid != os.Getpid() {
		t.Fatalf("pid file: %d, %v", pid, err)
	}
	if fi, err := os.Stat(p.Run); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("run dir: %v, %v", fi.Mode(), err)
	}
	if got, err := Running(d.home); err != nil || got != os.Getpid() {
		t.Fatalf("Running = %d, %v", got, err)
	}
	err = Run(context.Background(), Options{Home: d.home, Workspace: t.TempDir(), Config: config.Default()})
	var running *RunningError
	if !errors.As(err, &running) || running.Pid != os.Getpid() || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second daemon: %v, want a RunningError naming pid %d", err, os.Getpid())
	}
	// The refused daemon touched none of the running one's files.
	if got, err := readPid(p.Pid); err != nil || got != os.Getpid() {
		t.Fatalf("pid file after a refused second daemon: %d, %v", got, err)
	}
	st, err := ReadStatus(d.home)
	if err != nil || st.Pid != os.Getpid() || len(st.Capsules) != 5 || st.Capsules[0].State != "ready" {
		t.Fatalf("status: %+v, %v", st, err)
	}
	if err := d.shutdown(t); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{p.Pid, p.Status, p.Socket} {
		if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left after shutdown (%v)", f, err)
		}
	}
	if _, err := Running(d.home); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Running after shutdown: %v", err)
	}
	s, err := store.Open(config.Layout(d.home).State, store.Options{Timeout: 10 * time.Millisecond})
	if err != nil {
		t.Fatalf("store after shutdown: %v", err)
	}
	s.Close()
	log, _ := os.ReadFile(p.Log)
	for _, want := range []string{`"msg":"daemon ready"`, `"msg":"daemon stopped"`} {
		if !strings.Contains(string(log), want) {
			t.Errorf("log has no %s:\n%s", want, log)
		}
	}
}

// The files a killed daemon left (a pid file naming a dead process, a
// socket nobody serves, a status snapshot) are removed by the next daemon
// once it holds the lock, and replaced by its own.
func TestStaleRunFilesAreCleaned(t *testing.T) {
	home := t.TempDir()
	p := PathsOf(home)
	if err := os.MkdirAll(p.Run, 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", p.Socket)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	for path, body := range map[string]string{p.Pid: "999999\n", p.Status: `{"pid":999999}`} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ready := make(chan struct{})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Home: home, Workspace: t.TempDir(), Config: config.Default(), Ready: func(*kernel.Kernel) { close(ready) }})
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("daemon did not start over stale files: %v", err)
	}
	if _, err := os.Stat(p.Socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale socket still there: %v", err)
	}
	if pid, err := readPid(p.Pid); err != nil || pid != os.Getpid() {
		t.Errorf("pid file: %d, %v", pid, err)
	}
	if st, err := ReadStatus(home); err != nil || st.Pid != os.Getpid() {
		t.Errorf("status file: %+v, %v", st, err)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(p.Log)
	if !strings.Contains(string(log), "left behind") || !strings.Contains(string(log), "astrid.sock") {
		t.Errorf("the log does not name the stale files it removed:\n%s", log)
	}
}

// A shutdown with a turn running cancels it: the turn's frontend gets its
// final response, outcome cancelled, and the tool call it was waiting for
// is interrupted, before the capsules are unloaded.
func TestShutdownCancelsRunningTurns(t *testing.T) {
	d, turn := startBlockedTurn(t)
	finals := make(chan ipc.AgentResponse, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		for {
			ev, err := turn.Next(ctx)
			if err != nil {
				close(finals)
				return
			}
			if ev.Kind == agentclient.EventFinal {
				finals <- ev.Final
				return
			}
		}
	}()
	if err := d.shutdown(t); err != nil {
		t.Fatal(err)
	}
	final, ok := <-finals
	log, _ := os.ReadFile(PathsOf(d.home).Log)
	if !ok || final.Outcome != ipc.OutcomeCancelled {
		t.Fatalf("final response: %+v (%v), want outcome cancelled; log:\n%s", final, ok, log)
	}
	if !strings.Contains(string(log), `"msg":"running turns cancelled","turns":1,"unanswered":0`) {
		t.Errorf("log does not record the cancelled turn:\n%s", log)
	}
}

// A home on a read-only file system is refused with an error that says so.
func TestReadOnlyHome(t *testing.T) {
	home := readOnlyHome(t)
	err := Run(context.Background(), Options{Home: home, Workspace: t.TempDir(), Config: config.Default()})
	if err == nil || !strings.Contains(err.Error(), "read-only file system") || !strings.Contains(err.Error(), home) {
		t.Fatalf("Run on a read-only home: %v", err)
	}
}

// readOnlyHome mounts a read-only tmpfs holding an empty home's layout, or
// skips where mounting is not allowed.
func readOnlyHome(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { _ = unmount(dir) })
	l := config.Layout(dir)
	for _, d := range []string{l.Capsules, l.Principals, l.WasmCache, l.Run, l.Logs} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := remountReadOnly(dir); err != nil {
		t.Skipf("cannot remount read-only: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "probe"), nil, 0o600); err == nil {
		t.Skip("the read-only mount is writable (a privileged user)")
	}
	return dir
}

// The log file rotates at its size: the newest records in the file, the
// older ones in .1, .2, ..., the oldest beyond keep deleted, and a record
// never split across files.
func TestLogRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.log")
	r, err := openRotating(path, 100, 2)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(r, nil))
	for i := range 40 {
		log.Info("record", "n", i)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, name := range []string{path + ".2", path + ".1", path} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(b) > 100 {
			t.Errorf("%s holds %d bytes, over the 100 allowed", name, len(b))
		}
		all = append(all, strings.Split(strings.TrimSpace(string(b)), "\n")...)
	}
	if _, err := os.Stat(path + ".3"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a third old file was kept: %v", err)
	}
	last := all[len(all)-1]
	if !strings.HasSuffix(last, "n=39") {
		t.Errorf("the newest record is %q", last)
	}
	for i, line := range all {
		if !strings.Contains(line, "msg=record n=") {
			t.Errorf("line %d is not a whole record: %q", i, line)
		}
	}
}
