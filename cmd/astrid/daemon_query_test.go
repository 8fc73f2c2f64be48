package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/astrid-go/astrid/capsules/uplink"
	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/daemon"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/runtime"
	"github.com/astrid-go/astrid/internal/testutil"
)

// withoutUplink drops the uplink's row from capsule list's table: the
// daemon loads it, a one-shot kernel does not.
func withoutUplink(table string) string {
	var keep []string
	for _, line := range strings.SplitAfter(table, "\n") {
		if !strings.HasPrefix(line, uplink.ID+" ") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "")
}

// capsulesBlock is the capsule table of astrid status's text.
func capsulesBlock(t *testing.T, status string) string {
	t.Helper()
	_, rest, ok := strings.Cut(status, "\ncapsules (")
	block, _, ok2 := strings.Cut(rest, "\n\n")
	if !ok || !ok2 {
		t.Fatalf("no capsule table in:\n%s", status)
	}
	return block
}

// capsule list and status ask the running daemon over its socket: the list
// is the in-process one (a capsule copied in by hand and not approved
// failing the same way) plus the uplink the daemon loads; status is live
// (clients, the socket's bytes) and its capsule table is the status file's
// byte for byte; with --no-daemon, or when the daemon does not answer (it
// is stopped with SIGSTOP), status reads the file.
func TestCapsuleListAndStatusThroughTheDaemon(t *testing.T) {
	ws := promptHome(t, plainScript)
	home := os.Getenv("ASTRID_HOME")
	writeCapsule(t, filepath.Join(home, "capsules", "notes"), map[string]string{"Capsule.toml": notesManifest, "notes.md": "not approved"})
	inProcess, errOut, code := runAstrid(t, "", "capsule", "list", "--workspace", ws)
	if code != 1 || !strings.Contains(inProcess, "\nnotes: ") {
		t.Fatalf("capsule list in-process (notes not approved): exit %d: %s %s", code, inProcess, errOut)
	}
	inProcessJSON, _, _ := runAstrid(t, "", "capsule", "list", "--json", "--workspace", ws)
	daemonFor(t, ws)
	pid, err := daemon.Running(home)
	if err != nil {
		t.Fatal(err)
	}

	out, errOut, code := runAstrid(t, "", "capsule", "list")
	if code != 1 || !strings.Contains(out, "\n"+uplink.ID+" ") {
		t.Fatalf("capsule list through the daemon: exit %d: %s %s", code, out, errOut)
	}
	if withoutUplink(out) != inProcess {
		t.Fatalf("capsule list through the daemon differs from in-process:\n--- daemon\n%s\n--- in-process\n%s", out, inProcess)
	}
	var viaDaemon, local []runtime.Status
	outJSON, _, _ := runAstrid(t, "", "capsule", "list", "--json")
	if err := json.Unmarshal([]byte(outJSON), &viaDaemon); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(inProcessJSON), &local); err != nil {
		t.Fatal(err)
	}
	if viaDaemon[0].ID != uplink.ID || string(mustMarshal(t, viaDaemon[1:])) != string(mustMarshal(t, local)) {
		t.Fatalf("capsule list --json through the daemon:\n%s\nin-process:\n%s", outJSON, inProcessJSON)
	}
	if out, _, _ := runAstrid(t, "", "--no-daemon", "capsule", "list", "--workspace", ws); out != inProcess {
		t.Fatalf("--no-daemon capsule list:\n%s\nwant\n%s", out, inProcess)
	}
	if _, errOut, code := runAstrid(t, "", "capsule", "list", "--principal", "bob"); code != 2 || !strings.Contains(errOut, `serves you as principal "default"`) {
		t.Fatalf("capsule list --principal bob through the daemon: exit %d: %s", code, errOut)
	}

	// The daemon counts a client gone when its reader sees the connection
	// close, which can trail the client's exit: under load a status right
	// after the commands above still counted one of them (clients: 2). So
	// each live query is repeated until the daemon counts only itself.
	live := testutil.WaitForValue(t, daemonPatience, "a live status counting only its own client", func() (string, bool) {
		live, code := runProcess(t, home, "status")
		if code != 0 {
			t.Fatalf("live status: exit %d:\n%s", code, live)
		}
		return live, strings.Contains(live, "\nclients: 1\n")
	})
	if !strings.Contains(live, "\nsocket:\n") || !strings.Contains(live, "(live, from the daemon's socket)") || !strings.Contains(live, "notes") {
		t.Fatalf("live status:\n%s", live)
	}
	file, code := runProcess(t, home, "--no-daemon", "status")
	if code != 0 || strings.Contains(file, "clients:") || strings.Contains(file, "socket:") || !strings.Contains(file, "(as of ") {
		t.Fatalf("status --no-daemon: exit %d:\n%s", code, file)
	}
	if capsulesBlock(t, live) != capsulesBlock(t, file) {
		t.Fatalf("the live capsule table differs from the status file's:\n--- live\n%s\n--- file\n%s", live, file)
	}
	rep := testutil.WaitForValue(t, daemonPatience, "status --json counting only its own client", func() (statusReport, bool) {
		rep, code := statusOf(t, home)
		if code != 0 {
			t.Fatalf("status --json live: exit %d: %+v", code, rep)
		}
		return rep, rep.Clients == 1 && rep.Principals["default"].Clients == 1
	})
	d := rep.Principals["default"]
	if rep.Source != sourceSocket || rep.Pid != pid || d.BytesIn == 0 || d.BytesOut == 0 || rep.Bus == nil || rep.Dispatch == nil || rep.Bus.Published == 0 {
		t.Fatalf("status --json live: %+v, default %+v", rep, d)
	}

	// A daemon that does not answer (stopped, its lock still held): the
	// status file, after the live wait.
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	rep, code = statusOf(t, home)
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if code != 0 || rep.Source != sourceFile || rep.Pid != pid || rep.Status == nil || len(rep.Capsules) == 0 {
		t.Fatalf("status of a daemon that does not answer: exit %d: %+v", code, rep)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A uid other than the daemon owner's, mapped to alice ([uplink]
// principals), asks the same queries: capsule list shows the capsules, their
// state and tools but no install path and no error; status shows the pid,
// the uptime and alice's own figures, and nothing of the owner's workspace,
// of default's work or of the bus. (A test cannot connect from another uid,
// so the daemon here names another uid as its owner.)
func TestDaemonQueriesAsAnotherUID(t *testing.T) {
	ws := promptHome(t, plainScript)
	home := os.Getenv("ASTRID_HOME")
	writeCapsule(t, filepath.Join(home, "capsules", "notes"), map[string]string{"Capsule.toml": notesManifest, "notes.md": "not approved"})
	me := os.Getuid()
	rep := &daemon.Reporter{}
	up := kernel.Builtin{Manifest: uplink.Manifest, New: uplink.NewWith(uplink.Settings{
		OwnerUID: me + 1, Principals: map[int]string{me: "alice"}, Report: queryReporter(rep)})}
	ctx, stop := context.WithCancel(context.Background())
	ready := make(chan *kernel.Kernel, 1)
	done := make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, daemon.Options{
			Home: home, Workspace: ws, Config: config.Default(), Builtins: append([]kernel.Builtin{up}, builtins()...),
			Frontends: frontends(), ConfigFallback: configFallback(os.Getenv), Reporter: rep,
			Ready: func(k *kernel.Kernel) { ready <- k },
		})
	}()
	t.Cleanup(func() { stop(); <-done })
	var k *kernel.Kernel
	select {
	case k = <-ready:
	case err := <-done:
		t.Fatalf("daemon: %v", err)
	}
	// default works meanwhile: a turn of its own, in-process.
	if _, err := agentclient.Run(ctx, k.Frontend(), agentclient.Prompt{Text: "plain", SessionID: agentclient.NewSessionID()}, nil); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, daemonPatience, "the uplink to serve", func() bool {
		c, err := dialDaemon(context.Background(), home)
		if err == nil {
			c.Close()
		}
		return err == nil
	})

	out, errOut, code := runAstrid(t, "", "capsule", "list", "-v", "--principal", "alice")
	if code != 1 || !strings.Contains(out, "\nnotes ") || !strings.Contains(out, "read_file") {
		t.Fatalf("alice's capsule list: exit %d: %s %s", code, out, errOut)
	}
	if strings.Contains(out, home) || strings.Contains(out, "notes: ") {
		t.Fatalf("alice's capsule list shows the owner's paths or errors:\n%s", out)
	}
	var list []runtime.Status
	outJSON, _, _ := runAstrid(t, "", "capsule", "list", "--json", "--principal", "alice")
	if err := json.Unmarshal([]byte(outJSON), &list); err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		if s.Dir != "" || s.Error != "" {
			t.Fatalf("alice sees %s's dir %q, error %q", s.ID, s.Dir, s.Error)
		}
	}

	// Repeated until the daemon counts only this client (see
	// TestCapsuleListAndStatusThroughTheDaemon).
	var text string
	testutil.WaitForValue(t, daemonPatience, "alice's status counting only its own client", func() (string, bool) {
		text, errOut, code = runAstrid(t, "", "status")
		return text, code != 0 || strings.Contains(text, "clients: 1")
	})
	for _, hidden := range []string{ws, home + "/", "default", "bus:", "dispatch:"} {
		if strings.Contains(text, hidden) {
			t.Errorf("alice's status shows %q:\n%s", hidden, text)
		}
	}
	if code != 0 || !strings.Contains(text, "as principal alice") || !strings.Contains(text, "clients: 1") {
		t.Fatalf("alice's status: exit %d:\n%s %s", code, text, errOut)
	}
	out, _, _ = runAstrid(t, "", "status", "--json")
	var st statusReport
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	if st.Source != sourceSocket || st.Scope != daemon.ScopePrincipal || st.Pid != os.Getpid() || st.Bus != nil || st.Dispatch != nil || st.Workspace != "" || len(st.Principals) != 1 || st.Principals["alice"].BytesIn == 0 {
		t.Fatalf("alice's status --json: %s", out)
	}
}
