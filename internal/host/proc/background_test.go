//go:build linux

package proc

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/testutil"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// shCommand is sh -c script as internal/host prepares it once it has
// checked the grants, unconfined (its tests cover confinement).
func shCommand(t *testing.T, op, script string) (hostapi.ProcessRequest, *exec.Cmd, *Confined) {
	t.Helper()
	// Open until the test ends: the child changes into it at start.
	dir, err := os.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dir.Close() })
	path, err := ResolveProgram(op, "sh")
	if err != nil {
		t.Fatal(err)
	}
	req := hostapi.ProcessRequest{Program: "sh", Args: []string{"-c", script}}
	env, err := CheckRequest(op, req)
	if err != nil {
		t.Fatal(err)
	}
	cmd := Command(path, req.Args, env, dir)
	cf, err := PrivateTemp(op, cmd)
	if err != nil {
		t.Fatal(err)
	}
	return req, cmd, cf
}

// spawnSh spawns sh -c script as a background process of in for principal
// "default".
func spawnSh(t *testing.T, in *Instance, script string) hostapi.ProcessHandle {
	t.Helper()
	req, cmd, cf := shCommand(t, "process_spawn", script)
	h, err := in.Spawn("process_spawn", hostapi.ProcessSpawnRequest{ProcessRequest: req}, "default", cmd, cf)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestBackgroundLogsOfAGiB: a child writing 1 GiB is drained into a bounded
// buffer; the read says how much was dropped and keeps the newest bytes.
func TestBackgroundLogsOfAGiB(t *testing.T) {
	in := NewInstance("writer", nil, nil)
	t.Cleanup(in.Close)
	h := spawnSh(t, in, `head -c 1073741823 /dev/zero; echo`)
	p, ok := in.bg.lookup(in.id, "default", h.ID)
	if !ok {
		t.Fatal("not registered")
	}
	testutil.WaitForRecv(t, time.Minute, "1 GiB to be drained", p.finished)
	p.stdout.mu.Lock()
	held := len(p.stdout.buf)
	p.stdout.mu.Unlock()
	if held > hostapi.MaxProcessLogBuffer {
		t.Fatalf("the buffer holds %d bytes", held)
	}
	l, err := in.Logs("process_logs", "default", h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if l.Running || l.ExitCode != 0 || l.StdoutBytes != 1<<30 || len(l.Stdout) != hostapi.MaxProcessLogBuffer ||
		l.StdoutDropped != 1<<30-hostapi.MaxProcessLogBuffer || l.Stdout[len(l.Stdout)-1] != '\n' {
		t.Fatalf("kept %d, dropped %d, counted %d, exit %d, running %v", len(l.Stdout), l.StdoutDropped, l.StdoutBytes, l.ExitCode, l.Running)
	}
}

// TestRunCountPerInstance: past MaxRunsPerCapsule concurrent runs, a run is
// refused at once.
func TestRunCountPerInstance(t *testing.T) {
	in := NewInstance("runner", nil, nil)
	t.Cleanup(in.Close)
	for range MaxRunsPerCapsule {
		if !in.slots.acquire() {
			t.Fatal("a slot was refused under the limit")
		}
	}
	req, cmd, cf := shCommand(t, "process_run", "true")
	_, err := in.Run(context.Background(), "process_run", req, cmd, cf, "", func(string) error { return nil })
	if hostapi.CodeOf(err) != hostapi.CodeRateLimited {
		t.Fatalf("err %v", err)
	}
	for range MaxRunsPerCapsule {
		in.slots.release()
	}
}
