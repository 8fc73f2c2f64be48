package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/daemonclient"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/internal/uplinkwire"
	"github.com/astrid-go/astrid/ipc"
)

// approvalsOf runs `astrid approvals list --json` in ws with extra args.
func approvalsOf(t *testing.T, home, ws string, extra ...string) []uplinkwire.Allowance {
	t.Helper()
	r := runClient(t, home, ws, nil, append([]string{"approvals", "list", "--json"}, extra...)...)
	var list []uplinkwire.Allowance
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &list) != nil {
		t.Fatalf("approvals list --json %v: exit %d: %s %s", extra, r.code, r.stdout, r.stderr)
	}
	return list
}

// allowanceFor finds the allowance of list for what (a tool or a command).
func allowanceFor(t *testing.T, list []uplinkwire.Allowance, kind, what string) uplinkwire.Allowance {
	t.Helper()
	for _, a := range list {
		if a.Kind == kind && (a.Tool == what || a.Resource == what) {
			return a
		}
	}
	t.Fatalf("no %s allowance for %q in %+v", kind, what, list)
	return uplinkwire.Allowance{}
}

// `astrid approvals list | revoke` show and withdraw every standing
// allowance — the approval layer's (a tool) and the host approval call's
// (an exact shell command), "this session" and "always" — the same with a
// daemon and without: a revoked allowance is asked about again (here
// denied, as nobody can answer), the others stand, and a principal sees
// and revokes only their own.
func TestApprovalsListAndRevoke(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	startDaemonIn(t, home, ws)
	var client *daemonclient.Client
	testutil.WaitFor(t, daemonPatience, "the uplink to accept a client", func() bool {
		c, err := dialDaemonFor(context.Background(), home, ws, nil)
		if err == nil {
			client = c
		}
		return err == nil
	})
	defer client.Close()
	// The allowances, given through the socket as a frontend answers.
	give := func(tool string, args map[string]string, decision string) {
		t.Helper()
		raw, _ := json.Marshal(args)
		res, err := toolclient.CallToolApproving(context.Background(), client, ipc.DefaultPrincipal, tool, raw, daemonPatience,
			func(context.Context, ipc.ApprovalRequired) string { return decision })
		if err != nil || strings.Contains(res.Content, "not approved") {
			t.Fatalf("%s %v answered %s: %+v, %v", tool, args, decision, res, err)
		}
	}
	give("run_shell_command", map[string]string{"command": "echo one"}, ipc.DecisionApproveAlways)
	give("run_shell_command", map[string]string{"command": "echo two"}, ipc.DecisionApproveAlways)
	give("run_shell_command", map[string]string{"command": "echo three"}, ipc.DecisionApproveSession)
	give("write_file", map[string]string{"file_path": "w.txt", "content": "w"}, ipc.DecisionApproveSession)
	give("create_directory", map[string]string{"dir_path": "d1"}, ipc.DecisionApproveAlways)

	// Run without --yes and with no terminal: an allowance lets it through,
	// else it is asked and denied.
	run := func(args ...string) clientRun {
		return runClient(t, home, ws, nil, append([]string{"tool", "call"}, args...)...)
	}
	asked := func(r clientRun) bool { return strings.Contains(r.stderr, "astrid: denied") }
	shell := func(command string, extra ...string) clientRun {
		raw, _ := json.Marshal(map[string]string{"command": command})
		return run(append([]string{"run_shell_command", string(raw)}, extra...)...)
	}

	// With the daemon: all five, each once, with what was approved.
	list := approvalsOf(t, home, ws)
	if len(list) != 5 {
		t.Fatalf("through the daemon: %+v", list)
	}
	one := allowanceFor(t, list, "always", "echo one")
	two := allowanceFor(t, list, "always", "echo two")
	three := allowanceFor(t, list, "session", "echo three")
	write := allowanceFor(t, list, "session", "write_file")
	mkdir := allowanceFor(t, list, "always", "create_directory")
	if one.Capsule != "astrid-capsule-shell" || one.Since == nil || three.Capsule != "astrid-capsule-shell" || write.Capsule != "astrid-capsule-fs" || write.Since == nil || mkdir.Since == nil {
		t.Fatalf("allowances: %+v %+v %+v", one, write, mkdir)
	}
	ids := map[string]bool{}
	for _, a := range list {
		ids[a.ID] = true
	}
	if len(ids) != 5 {
		t.Fatalf("ids are not distinct: %+v", list)
	}
	r := runClient(t, home, ws, nil, "approvals", "list")
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if r.code != 0 || len(lines) != 6 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(r.stdout, "echo one") || !strings.Contains(r.stdout, "tool write_file") {
		t.Fatalf("approvals list: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	for _, l := range lines {
		if utf8.RuneCountInString(l) > tableWidth {
			t.Fatalf("a line over %d columns: %q", tableWidth, l)
		}
	}

	if r := shell("echo one"); asked(r) {
		t.Fatalf("an always-approved command was asked: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	r = runClient(t, home, ws, nil, "approvals", "revoke", one.ID, write.ID)
	if r.code != 0 || !strings.Contains(r.stdout, "revoked "+one.ID+" (always, astrid-capsule-shell): echo one") ||
		!strings.Contains(r.stdout, "revoked "+write.ID+" (session, astrid-capsule-fs): tool write_file") {
		t.Fatalf("revoke: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if r := shell("echo one"); !asked(r) {
		t.Fatalf("a revoked command was not asked again: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if r := run("write_file", `{"file_path":"w.txt","content":"again"}`); !asked(r) {
		t.Fatalf("a revoked tool was not asked again: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if r := shell("echo three"); asked(r) {
		t.Fatalf("a session allowance not revoked was lost: %s", r.stderr)
	}
	if r := runClient(t, home, ws, nil, "approvals", "revoke", one.ID); r.code != 1 || !strings.Contains(r.stderr, "no standing allowance "+one.ID) {
		t.Fatalf("revoke twice: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{{"approvals", "revoke"}, {"approvals", "revoke", two.ID, "--all"}} {
		if r := runClient(t, home, ws, nil, args...); r.code != 2 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
	}
	// Another principal (in-process, beside the daemon) sees none of
	// default's and revokes none.
	if l := approvalsOf(t, home, ws, "--no-daemon", "--principal", "alice"); len(l) != 0 {
		t.Fatalf("alice sees %+v", l)
	}
	if r := runClient(t, home, ws, nil, "approvals", "revoke", two.ID, "--no-daemon", "--principal", "alice"); r.code != 1 {
		t.Fatalf("alice revoked default's: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}

	if r := runClient(t, home, ws, nil, "stop"); r.code != 0 {
		t.Fatalf("stop: exit %d: %s", r.code, r.stderr)
	}
	// An "always" an older astrid kept: the decision alone.
	st, err := store.Open(config.Layout(home).State, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.KV(ipc.DefaultPrincipal, ipc.KernelSourceID).Set("approval/astrid-capsule-shell/0123", []byte(ipc.DecisionApproveAlways)); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	// Without the daemon: the "always" ones, under the same ids; the
	// session ones ended with it.
	list = approvalsOf(t, home, ws)
	if len(list) != 3 || allowanceFor(t, list, "always", "echo two").ID != two.ID || allowanceFor(t, list, "always", "create_directory").ID != mkdir.ID {
		t.Fatalf("in-process: %+v", list)
	}
	if r := runClient(t, home, ws, nil, "approvals", "list"); !strings.Contains(r.stdout, "(recorded before names were kept)") {
		t.Fatalf("the old allowance: %s %s", r.stdout, r.stderr)
	}
	if r := shell("echo two"); asked(r) {
		t.Fatalf("in-process, an always-approved command was asked: %s", r.stderr)
	}
	if r := runClient(t, home, ws, nil, "approvals", "revoke", two.ID); r.code != 0 || !strings.Contains(r.stdout, "revoked "+two.ID) {
		t.Fatalf("revoke in-process: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if r := shell("echo two"); !asked(r) {
		t.Fatalf("in-process, a revoked command was not asked again: %s", r.stderr)
	}
	r = runClient(t, home, ws, nil, "approvals", "revoke", "--all")
	if r.code != 0 || strings.Count(r.stdout, "revoked ") != 2 || !strings.Contains(r.stdout, "tool create_directory") {
		t.Fatalf("revoke --all: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if r := run("create_directory", `{"dir_path":"d2"}`); !asked(r) {
		t.Fatalf("after revoke --all, a tool was not asked: %s", r.stderr)
	}
	if r := runClient(t, home, ws, nil, "approvals", "list"); r.code != 0 || !strings.Contains(r.stdout, "No standing allowances") {
		t.Fatalf("list after --all: %s %s", r.stdout, r.stderr)
	}
}
