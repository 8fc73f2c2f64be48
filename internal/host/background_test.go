//go:build linux

package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/host/proc"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/manifest"
)

const persistentCapsule = `
[package]
name = "keeper"
version = "0.1.0"
[capabilities]
fs_read = ["*"]
fs_write = ["*"]
host_process = ["sh", "sleep"]
allow_persistent = true
`

// bgCall is a process capsule with a call for principal, closed (which
// ends its background processes) when the test ends.
func bgCall(t *testing.T, f fixture, toml, principal string) (*Capsule, *Call) {
	t.Helper()
	c := f.capsule(t, toml)
	t.Cleanup(c.Close)
	call, _ := c.Begin(context.Background(), principal)
	t.Cleanup(call.End)
	return c, call
}

func spawnSh(t *testing.T, call *Call, script string, persistent bool) string {
	t.Helper()
	h, err := call.ProcessSpawn(hostapi.ProcessSpawnRequest{ProcessRequest: hostapi.ProcessRequest{Program: "sh", Args: []string{"-c", script}}, Persistent: persistent})
	if err != nil {
		t.Fatalf("spawn: %v", err)
	}
	return h.ID
}

// waitLogs reads id until what it gathered satisfies cond, and returns it.
func waitLogs(t *testing.T, call *Call, id string, cond func(out string, l hostapi.ProcessLogs) bool) (string, hostapi.ProcessLogs) {
	t.Helper()
	var out strings.Builder
	var l hostapi.ProcessLogs
	testutil.WaitFor(t, testWait, "the process's logs", func() bool {
		var err error
		if l, err = call.ProcessLogs(id); err != nil {
			t.Fatalf("logs: %v", err)
		}
		out.Write(l.Stdout)
		return cond(out.String(), l)
	})
	return out.String(), l
}

// TestBackgroundRefusesBadInput: a background spawn is refused what a run
// is, and a persistent one without allow_persistent, naming the grant.
func TestBackgroundRefusesBadInput(t *testing.T) {
	f := newFixture(t)
	_, call := bgCall(t, f, procCapsule, "default")
	cases := badProcessRequests(t, f)
	cases = append(cases, badProcessRequest{"persistent without allow_persistent", hostapi.ProcessRequest{Program: "sh"}, hostapi.CodeDenied, "allow_persistent"})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := call.ProcessSpawn(hostapi.ProcessSpawnRequest{ProcessRequest: tc.req, Persistent: strings.HasPrefix(tc.name, "persistent")})
			if hostapi.CodeOf(err) != tc.code || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("err = %v (code %v), want code %v saying %q", err, hostapi.CodeOf(err), tc.code, tc.says)
			}
		})
	}
}

// TestBackgroundLogsThenExit: output arrives read by read, each read only
// what is new; the read that reports the exit collects the id.
func TestBackgroundLogsThenExit(t *testing.T) {
	f := newFixture(t)
	_, call := bgCall(t, f, procCapsule, "default")
	id := spawnSh(t, call, `echo one; echo warn >&2; while [ ! -e go ]; do sleep 0.01; done; echo two; exit 5`, false)
	out, l := waitLogs(t, call, id, func(out string, _ hostapi.ProcessLogs) bool { return out == "one\n" })
	if !l.Running {
		t.Fatalf("not running before it was let go: %+v", l)
	}
	if err := os.WriteFile(filepath.Join(f.ws, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	rest, l := waitLogs(t, call, id, func(_ string, l hostapi.ProcessLogs) bool { return !l.Running })
	if out+rest != "one\ntwo\n" {
		t.Fatalf("read %q then %q", out, rest)
	}
	// The exit was reported with the last output (this read or an
	// earlier one); the id is collected.
	if l.Running || l.ExitCode != 5 || l.Killed || l.StdoutBytes != int64(len("one\ntwo\n")) || l.StderrBytes != int64(len("warn\n")) {
		t.Fatalf("final read %+v", l)
	}
	if _, err := call.ProcessLogs(id); hostapi.CodeOf(err) != hostapi.CodeNotFound {
		t.Fatalf("read after the exit was reported: %v", err)
	}
}

// TestBackgroundKillSIGINTThenSIGKILL: ProcessKill interrupts the group, and
// kills one that traps SIGINT after the grace; nothing of it remains, and
// what it wrote last comes back.
func TestBackgroundKillSIGINTThenSIGKILL(t *testing.T) {
	f := newFixture(t)
	_, call := bgCall(t, f, procCapsule, "default")
	id := spawnSh(t, call, `trap 'echo int >> got' INT; sleep 600 & echo "$$ $!" > pid.tmp; mv pid.tmp pid; echo ready; while :; do sleep 0.05; done`, false)
	pids := testutil.PidFile(t, testWait, filepath.Join(f.ws, "pid"))
	l, err := call.ProcessKill(id)
	if err != nil {
		t.Fatal(err)
	}
	if l.Running || !l.Killed || l.Signal != "killed" || !strings.Contains(string(l.Stdout), "ready") {
		t.Fatalf("kill answered %+v", l)
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws, "got")); !strings.Contains(string(b), "int") {
		t.Error("the trap never saw SIGINT before SIGKILL")
	}
	testutil.NoProcess(t, pids...)
	if _, err := call.ProcessKill(id); hostapi.CodeOf(err) != hostapi.CodeNotFound {
		t.Fatalf("second kill: %v", err)
	}
}

// TestBackgroundBelongsToItsOwner: another principal, another capsule and a
// guessed id all get not found, for reads and kills; the owner still can.
func TestBackgroundBelongsToItsOwner(t *testing.T) {
	f := newFixture(t)
	f.deps.Background = proc.NewBackground(nil)
	t.Cleanup(f.deps.Background.Close)
	c, alice := bgCall(t, f, procCapsule, "alice")
	id := spawnSh(t, alice, `echo mine; exec sleep 600`, false)
	bob, _ := c.Begin(context.Background(), "bob")
	defer bob.End()
	_, other := bgCall(t, f, strings.Replace(procCapsule, `name = "runner"`, `name = "other"`, 1), "alice")
	defaultCall, _ := c.Begin(context.Background(), "")
	defer defaultCall.End()
	cases := []struct {
		name string
		call *Call
		id   string
	}{
		{"another principal", bob, id},
		{"the default principal", defaultCall, id},
		{"another capsule, same principal", other, id},
		{"a guessed id", alice, "bg-000000000000000000000000"},
		{"an empty id", alice, ""},
		{"a long id", alice, strings.Repeat("x", 1<<20)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.call.ProcessLogs(tc.id); hostapi.CodeOf(err) != hostapi.CodeNotFound {
				t.Errorf("logs: %v", err)
			}
			if _, err := tc.call.ProcessKill(tc.id); hostapi.CodeOf(err) != hostapi.CodeNotFound || len(err.Error()) > 512 {
				t.Errorf("kill: %v", err)
			}
		})
	}
	out, l := waitLogs(t, alice, id, func(out string, _ hostapi.ProcessLogs) bool { return out == "mine\n" })
	if !l.Running || out != "mine\n" {
		t.Fatalf("the owner's read: %q %+v", out, l)
	}
}

// TestBackgroundNinthSpawnRefused: a capsule holds at most
// MaxBackgroundProcesses; killing one makes room; its unload ends all.
func TestBackgroundNinthSpawnRefused(t *testing.T) {
	f := newFixture(t)
	c, call := bgCall(t, f, procCapsule, "default")
	var ids []string
	for i := range hostapi.MaxBackgroundProcesses {
		ids = append(ids, spawnSh(t, call, `echo $$ > p`+string(rune('a'+i))+`.tmp; mv p`+string(rune('a'+i))+`.tmp p`+string(rune('a'+i))+`; exec sleep 600`, false))
	}
	if _, err := call.ProcessSpawn(hostapi.ProcessSpawnRequest{ProcessRequest: hostapi.ProcessRequest{Program: "sleep", Args: []string{"600"}}}); hostapi.CodeOf(err) != hostapi.CodeRateLimited {
		t.Fatalf("9th spawn: %v", err)
	}
	var pids []int
	for i := range hostapi.MaxBackgroundProcesses {
		pids = append(pids, testutil.PidFile(t, testWait, filepath.Join(f.ws, "p"+string(rune('a'+i))))...)
	}
	if _, err := call.ProcessKill(ids[0]); err != nil {
		t.Fatal(err)
	}
	spawnSh(t, call, `exec sleep 600`, false)
	c.Close()
	testutil.NoProcess(t, pids...)
	if _, err := call.ProcessLogs(ids[1]); hostapi.CodeOf(err) != hostapi.CodeNotFound {
		t.Fatalf("a process read after its capsule unloaded: %v", err)
	}
}

// TestBackgroundEscapeEndsWithItsCapsule: a background child that forks a
// grandchild which setsid's away and is orphaned; the capsule unloads and
// no descendant survives.
func TestBackgroundEscapeEndsWithItsCapsule(t *testing.T) {
	f := newFixture(t)
	c, call := bgCall(t, f, procCapsule, "default")
	setsid := `$(command -v setsid || echo "sh -mc")`
	spawnSh(t, call, `sh -c '`+setsid+` sh -c "trap \"\" INT; echo \$\$ > esc.tmp; mv esc.tmp esc; exec sleep 600" & '; echo $$ > pid.tmp; mv pid.tmp pid; exec sleep 600`, false)
	pids := testutil.PidFile(t, testWait, filepath.Join(f.ws, "pid"))
	esc := testutil.PidFile(t, testWait, filepath.Join(f.ws, "esc"))
	testutil.WaitFor(t, testWait, "the grandchild's escape", func() bool {
		st, ok := readStat(esc[0])
		return ok && st.sid != pids[0] && st.pgid != pids[0] && st.ppid == os.Getpid()
	})
	c.Close()
	testutil.NoProcess(t, append(pids, esc...)...)
}

// TestBackgroundTimeout: a spawn's Timeout ends it, and its logs say so.
func TestBackgroundTimeout(t *testing.T) {
	f := newFixture(t)
	_, call := bgCall(t, f, procCapsule, "default")
	h, err := call.ProcessSpawn(hostapi.ProcessSpawnRequest{ProcessRequest: hostapi.ProcessRequest{Program: "sleep", Args: []string{"600"}, Timeout: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	_, l := waitLogs(t, call, h.ID, func(_ string, l hostapi.ProcessLogs) bool { return !l.Running })
	if !l.TimedOut || l.Killed || l.Signal != "interrupt" {
		t.Fatalf("%+v", l)
	}
}

// TestBackgroundPersistentOutlivesAReload: across a reload of its capsule
// (the instance closes, a new one is bound) a persistent process runs on
// and the new instance reads and kills it; a plain one ends with the old
// instance; an unload for good and the kernel's stop end persistent ones.
func TestBackgroundPersistentOutlivesAReload(t *testing.T) {
	f := newFixture(t)
	f.deps.Background = proc.NewBackground(nil)
	old, call := bgCall(t, f, persistentCapsule, "alice")
	keep := spawnSh(t, call, `echo $$ > keep.tmp; mv keep.tmp keep; echo kept; exec sleep 600`, true)
	spawnSh(t, call, `echo $$ > plain.tmp; mv plain.tmp plain; exec sleep 600`, false)
	keepPid := testutil.PidFile(t, testWait, filepath.Join(f.ws, "keep"))
	plainPid := testutil.PidFile(t, testWait, filepath.Join(f.ws, "plain"))
	old.Close()
	testutil.NoProcess(t, plainPid...)

	reloaded, err := NewCapsule(f.deps, parseManifest(t, persistentCapsule), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reloaded.Close)
	next, _ := reloaded.Begin(context.Background(), "alice")
	defer next.End()
	out, l := waitLogs(t, next, keep, func(out string, _ hostapi.ProcessLogs) bool { return out == "kept\n" })
	if !l.Running || out != "kept\n" {
		t.Fatalf("after the reload: %q %+v", out, l)
	}
	if _, err := next.ProcessKill(keep); err != nil {
		t.Fatal(err)
	}
	testutil.NoProcess(t, keepPid...)

	// Unloaded for good: a persistent process ends.
	again := spawnSh(t, next, `echo $$ > again.tmp; mv again.tmp again; exec sleep 600`, true)
	againPid := testutil.PidFile(t, testWait, filepath.Join(f.ws, "again"))
	reloaded.Close()
	if _, err := next.ProcessLogs(again); err != nil {
		t.Fatalf("a persistent process after its instance closed: %v", err)
	}
	reloaded.Discard()
	testutil.NoProcess(t, againPid...)

	// The kernel's stop ends the rest, and refuses new ones.
	third, _ := reloaded.Begin(context.Background(), "alice")
	defer third.End()
	spawnSh(t, third, `echo $$ > last.tmp; mv last.tmp last; exec sleep 600`, true)
	lastPid := testutil.PidFile(t, testWait, filepath.Join(f.ws, "last"))
	f.deps.Background.Close()
	testutil.NoProcess(t, lastPid...)
	if _, err := third.ProcessSpawn(hostapi.ProcessSpawnRequest{ProcessRequest: hostapi.ProcessRequest{Program: "sleep", Args: []string{"1"}}, Persistent: true}); hostapi.CodeOf(err) != hostapi.CodeUnavailable {
		t.Fatalf("spawn after the stop: %v", err)
	}
}

func parseManifest(t *testing.T, toml string) *manifest.Manifest {
	t.Helper()
	m, diags := manifest.Parse([]byte(toml), manifest.FileName, "")
	if err := diags.Err(false); err != nil {
		t.Fatal(err)
	}
	return m
}
