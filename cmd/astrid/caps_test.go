package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/audit"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/daemonclient"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/internal/uplinkwire"
	"github.com/astrid-go/astrid/ipc"
)

// capsOf runs `astrid caps list --json` in ws with extra args.
func capsOf(t *testing.T, home, ws string, extra ...string) []uplinkwire.Allowance {
	t.Helper()
	r := runClient(t, home, ws, nil, append([]string{"caps", "list", "--json"}, extra...)...)
	var list []uplinkwire.Allowance
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &list) != nil {
		t.Fatalf("caps list --json %v: exit %d: %s %s", extra, r.code, r.stdout, r.stderr)
	}
	return list
}

// In a running daemon: an "always" answer becomes a signed token that
// `caps list` shows; the tool then runs unasked; `caps revoke` takes effect
// at the next call (asked again, and denied as nobody answers). A token
// granted in advance by the operator is honoured by the running daemon; the
// same token edited in the store to extend its expiry is ignored (asked
// again) and listed as such.
func TestCapsAlwaysListedRevokedAskedAgainInARunningDaemon(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	startDaemonIn(t, home, ws)
	t.Cleanup(func() { runClient(t, home, ws, nil, "stop") })
	var client *daemonclient.Client
	testutil.WaitFor(t, daemonPatience, "the uplink to accept a client", func() bool {
		c, err := dialDaemonFor(context.Background(), home, ws, nil)
		if err == nil {
			client = c
		}
		return err == nil
	})
	defer client.Close()
	raw, _ := json.Marshal(map[string]string{"dir_path": "d0"})
	res, err := toolclient.CallToolApproving(context.Background(), client, ipc.DefaultPrincipal, "create_directory", raw, daemonPatience,
		func(context.Context, ipc.ApprovalRequired) string { return ipc.DecisionApproveAlways })
	if err != nil || strings.Contains(res.Content, "not approved") {
		t.Fatalf("create_directory answered always: %+v, %v", res, err)
	}
	asked := func(r clientRun) bool { return strings.Contains(r.stderr, "astrid: denied") }
	mkdir := func(dir string) clientRun {
		return runClient(t, home, ws, nil, "tool", "call", "create_directory", `{"dir_path":"`+dir+`"}`)
	}

	list := capsOf(t, home, ws)
	if len(list) != 1 || list[0].Kind != "always" || list[0].Tool != "create_directory" || list[0].Capsule != "astrid-capsule-fs" ||
		len(list[0].Token) != 32 || list[0].Since == nil || list[0].Expiry != nil || list[0].Ignored != "" {
		t.Fatalf("caps list after an always answer: %+v", list)
	}
	if r := runClient(t, home, ws, nil, "caps", "list"); r.code != 0 || !strings.Contains(r.stdout, list[0].ID) || !strings.Contains(r.stdout, "tool create_directory") {
		t.Fatalf("caps list: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if r := mkdir("d1"); asked(r) || r.code != 0 {
		t.Fatalf("with the token, the call was asked: exit %d: %s", r.code, r.stderr)
	}
	// The call the token let through is in the chain as an approval
	// answered by that token, named.
	// The token's issue names the question whose "always" minted it, as
	// the person's answer did.
	var byToken []string
	answeredAlways, issuedFor := map[string]bool{}, ""
	if err := audit.Show(config.Layout(home).Audit, audit.Filter{Principals: []string{ipc.DefaultPrincipal}}, func(r audit.Record) error {
		switch e := r.Entry; {
		case e.Kind == audit.KindApprovalAnswered && e.Outcome == "allowed":
			byToken = append(byToken, e.Subject+":"+e.Detail["answered_by"]+":"+e.Detail["token_id"])
		case e.Kind == audit.KindApprovalAnswered && e.Outcome == ipc.DecisionApproveAlways:
			answeredAlways[e.Detail["request_id"]] = true
		case e.Kind == audit.KindTokenIssued && e.Subject == list[0].Token:
			issuedFor = e.Detail["request_id"]
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := "create_directory:token:" + list[0].Token; !slices.Equal(byToken, []string{want}) {
		t.Fatalf("approvals answered by a token in the chain: %q, want [%q]", byToken, want)
	}
	if issuedFor == "" || !answeredAlways[issuedFor] {
		t.Fatalf("token %s issued for question %q; the chain's always answers: %v", list[0].Token, issuedFor, answeredAlways)
	}
	if r := runClient(t, home, ws, nil, "caps", "revoke", list[0].Token); r.code != 0 || !strings.Contains(r.stdout, "revoked "+list[0].ID+" (always, astrid-capsule-fs)") {
		t.Fatalf("caps revoke: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if r := mkdir("d2"); !asked(r) {
		t.Fatalf("after revoke, the call was not asked again: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if l := capsOf(t, home, ws); len(l) != 0 {
		t.Fatalf("after revoke: %+v", l)
	}
	if r := runClient(t, home, ws, nil, "caps", "revoke", list[0].ID); r.code != 1 || !strings.Contains(r.stderr, "no capability token") {
		t.Fatalf("revoke twice: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}

	// The operator grants one in advance; the running daemon honours it.
	r := runClient(t, home, ws, nil, "caps", "grant", "--capsule", "astrid-capsule-fs", "--tool", "create_directory", "--expires", "1h")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "granted ") {
		t.Fatalf("caps grant: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if r := mkdir("d3"); asked(r) || r.code != 0 {
		t.Fatalf("a granted token was not honoured: exit %d: %s", r.code, r.stderr)
	}

	// Its expiry extended in the store, by hand: ignored at once.
	st, err := store.Open(config.Layout(home).State, store.Options{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	kv := st.KV(ipc.DefaultPrincipal, ipc.KernelSourceID)
	keys, err := kv.List("cap/")
	if err != nil || len(keys) != 1 {
		t.Fatalf("granted token keys: %v %v", keys, err)
	}
	enc, _, _ := kv.Get(keys[0])
	parts := strings.Split(string(enc), ".")
	body, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	m["expiry"] = time.Now().Add(10 * 365 * 24 * time.Hour).UTC().Format(time.RFC3339)
	body, _ = json.Marshal(m)
	parts[1] = base64.RawURLEncoding.EncodeToString(body)
	if err := kv.Set(keys[0], []byte(strings.Join(parts, "."))); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if r := mkdir("d4"); !asked(r) {
		t.Fatalf("a token with its expiry edited was honoured: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	l := capsOf(t, home, ws)
	if len(l) != 1 || !strings.Contains(l[0].Ignored, "signature") {
		t.Fatalf("the edited token is not listed as ignored: %+v", l)
	}

	// Bad input to grant: exit 2 with the reason.
	for _, args := range [][]string{
		{"--principal", "../etc", "--capsule", "astrid-capsule-fs", "--tool", "write_file"},
		{"--capsule", "-rf", "--tool", "write_file"},
		{"--capsule", "astrid-capsule-fs", "--tool", "no such"},
		{"--capsule", "astrid-capsule-fs", "--tool", "write_file", "--expires", "-1h"},
	} {
		if r := runClient(t, home, ws, nil, append([]string{"caps", "grant"}, args...)...); r.code != 2 || !strings.Contains(r.stderr, "astrid: --") {
			t.Errorf("caps grant %v: exit %d: %s", args, r.code, r.stderr)
		}
	}
}
