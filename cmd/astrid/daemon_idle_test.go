package main

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/daemon"
	"github.com/astrid-go/astrid/internal/daemonclient"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/internal/uplinkwire"
)

// idleHome is a home whose config.toml sets [daemon] idle_exit.
func idleHome(t *testing.T, idle string) (home, ws string) {
	t.Helper()
	home, ws = t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("[daemon]\nidle_exit = \""+idle+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return home, ws
}

// stopped reports whether no daemon runs for home.
func stopped(home string) bool {
	_, err := daemon.Running(home)
	return errors.Is(err, daemon.ErrNotRunning)
}

// A daemon astrid chat started by itself stops once it has had no client
// and no turn for [daemon] idle_exit, saying why in its log; while a
// client is connected it stays, and astrid status shows the timer.
func TestIdleDaemonStartedByChatStops(t *testing.T) {
	const idle = time.Second
	home, ws := idleHome(t, idle.String())
	// As astrid chat starts it (the child re-runs this binary's main).
	t.Setenv("ASTRID_TEST_RUN_MAIN", "1")
	t.Setenv(config.HomeEnv, home)
	if _, err := config.Home(); err != nil { // makes its directories
		t.Fatal(err)
	}
	pid, err := startDetached(home, ws, startedByChat, daemonPatience)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	c, err := daemonclient.Dial(t.Context(), home, daemonclient.Options{Timeout: daemonPatience})
	if err != nil {
		t.Fatal(err)
	}
	rep, code := statusOf(t, home)
	if code != 0 || rep.Status == nil || rep.Idle == nil || rep.Idle.ExitAfter != idle.String() || rep.Idle.StartedBy != startedByChat || rep.Idle.Since != nil {
		t.Fatalf("status: exit %d, %+v", code, rep.Status)
	}
	if out, _ := runProcess(t, home, "status"); !strings.Contains(out, "idle exit: stops after 1s with no client connected and no turn running (started by astrid chat); not idle now") {
		t.Fatalf("status does not show the idle timer:\n%s", out)
	}
	// Held past the idle time, the client keeps the daemon (a negative:
	// only a wait shows it).
	time.Sleep(3 * idle)
	if stopped(home) {
		t.Fatalf("the daemon stopped with a client connected; log:\n%s", tail(daemon.PathsOf(home).Log, 20))
	}
	c.Close()
	testutil.WaitFor(t, daemonPatience, "the idle daemon to stop", func() bool { return stopped(home) })
	if log := tail(daemon.PathsOf(home).Log, 30); !strings.Contains(log, "daemon idle: no client connected and no turn running") || !strings.Contains(log, `"started_by":"chat"`) {
		t.Fatalf("the log does not say why it stopped:\n%s", log)
	}
}

// A daemon started on purpose (astrid start) never stops for being idle,
// whatever idle_exit says, and shows no timer.
func TestDaemonStartedOnPurposeNeverIdlesOut(t *testing.T) {
	const idle = 500 * time.Millisecond
	home, ws := idleHome(t, idle.String())
	pid := startedPid(t, home, ws)
	rep, _ := statusOf(t, home)
	if rep.Status == nil || rep.Idle != nil {
		t.Fatalf("status of a daemon started on purpose: %+v", rep.Status)
	}
	time.Sleep(4 * idle) // a negative: only a wait shows it
	if running, err := daemon.Running(home); err != nil || running != pid {
		t.Fatalf("the daemon started with astrid start stopped: %d, %v", running, err)
	}
	if out, code := runProcess(t, home, "stop"); code != 0 {
		t.Fatalf("stop: exit %d: %s", code, out)
	}
}

// A table full of clients that said hello and then went quiet (the
// default 128) does not lock the owner out: astrid tool call gets through
// within its timeout, and the client idle longest is told it was evicted.
func TestIdleClientsDoNotLockOutTheOwnersCommand(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "here.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	startDaemonIn(t, home, ws)
	const table = 128 // [uplink] max_clients by default
	conns := make([]net.Conn, table)
	for i := range conns {
		conn, err := net.Dial("unix", daemon.PathsOf(home).Socket)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		hello, err := uplinkwire.Encode(uplinkwire.Frame{Op: uplinkwire.OpHello, Version: uplinkwire.Version, Client: "idle"})
		if err != nil {
			t.Fatal(err)
		}
		if err := uplinkwire.Write(conn, hello); err != nil {
			t.Fatal(err)
		}
		if f := readFrame(t, conn); f.Op != uplinkwire.OpWelcome {
			t.Fatalf("client %d: %+v", i, f)
		}
		conns[i] = conn
	}
	run := runClient(t, home, ws, nil, "tool", "call", "list_directory", `{"dir_path":"."}`)
	if run.code != 0 || !strings.Contains(run.stdout, "here.txt") {
		t.Fatalf("the owner's tool call at a full table: exit %d\n%s\n%s", run.code, run.stdout, run.stderr)
	}
	if f := readFrame(t, conns[0]); f.Op != uplinkwire.OpError || f.Code != uplinkwire.CodeEvicted {
		t.Fatalf("the client idle longest got %+v, want an %q error", f, uplinkwire.CodeEvicted)
	}
}

func readFrame(t *testing.T, conn net.Conn) uplinkwire.Frame {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(daemonPatience))
	body, err := uplinkwire.Read(conn)
	if err != nil {
		t.Fatalf("no frame: %v", err)
	}
	f, err := uplinkwire.Decode(body)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
