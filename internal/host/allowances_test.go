package host

import (
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/host/ask"
	"github.com/astrid-go/astrid/ipc"
)

// Each standing allowance of the host approval call is listed with what
// was approved and when, for its own principal only; a value kept before
// names were kept is listed by its capsule; a revoked allowance, "this
// session" or "always", is asked about again.
func TestApprovalCallAllowancesListAndRevoke(t *testing.T) {
	f, c := approvalFixture(t, 0)
	a, st := f.deps.Approvals, f.deps.Store
	alice := listen(t, f, "alice")
	bob := listen(t, f, "bob")
	before := time.Now().UTC().Add(-time.Second)

	session := askApproval(c, "alice", "ls", "ls -la")
	alice.answer(testFrontend, "alice", alice.next().RequestID, ipc.DecisionApproveSession)
	wantAnswer(t, session, true)
	always := askApproval(c, "alice", "make", "make test\n(in sub)")
	alice.answer(testFrontend, "alice", alice.next().RequestID, ipc.DecisionApproveAlways)
	wantAnswer(t, always, true)
	bobs := askApproval(c, "bob", "rm", "rm x")
	bob.answer(testFrontend, "bob", bob.next().RequestID, ipc.DecisionApproveAlways)
	wantAnswer(t, bobs, true)
	// An "always" written before the kernel kept names: the decision
	// alone, under the key the approval gave it (in the kernel's reserved
	// namespace of the principal).
	echo := askApproval(c, "alice", "echo", "echo old")
	alice.answer(testFrontend, "alice", alice.next().RequestID, ipc.DecisionApproveAlways)
	wantAnswer(t, echo, true)
	oldKey := ""
	if list, err := a.Allowances(st, "alice"); err == nil {
		for _, al := range list {
			if al.Action == "echo" {
				oldKey = al.Key
			}
		}
	}
	if oldKey == "" {
		t.Fatal("the echo allowance is not listed")
	}
	if err := st.KV("alice", ipc.KernelSourceID).Set(oldKey, []byte(ipc.DecisionApproveAlways)); err != nil {
		t.Fatal(err)
	}

	list, err := a.Allowances(st, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 {
		t.Fatalf("alice's allowances: %+v", list)
	}
	got := map[string]ask.Allowance{}
	for _, al := range list {
		got[al.Resource] = al
	}
	s, al, old := got["ls -la"], got[`make test\u000a(in sub)`], got[""]
	if !s.Session || s.Capsule != "asker" || s.Action != "ls" || s.Since.Before(before) || s.Unnamed {
		t.Fatalf("the session allowance: %+v", s)
	}
	if al.Session || al.Capsule != "asker" || al.Action != "make" || al.Since.Before(before) || al.Unnamed {
		t.Fatalf("the always allowance: %+v", al)
	}
	if old.Session || old.Capsule != "asker" || !old.Unnamed || old.Key != oldKey || !old.Since.IsZero() {
		t.Fatalf("the old always allowance: %+v", old)
	}
	if b, _ := a.Allowances(st, "bob"); len(b) != 1 || b[0].Action != "rm" {
		t.Fatalf("bob's allowances: %+v", b)
	}

	// Alice cannot revoke bob's; nor a key she does not hold.
	bobList, _ := a.Allowances(st, "bob")
	if ok, err := a.Revoke(st, "alice", bobList[0].Key, false); ok || err != nil {
		t.Fatalf("alice revoked bob's: %v %v", ok, err)
	}
	for _, r := range []ask.Allowance{s, al, old} {
		if ok, err := a.Revoke(st, "alice", r.Key, r.Session); !ok || err != nil {
			t.Fatalf("revoke %+v: %v %v", r, ok, err)
		}
		if ok, err := a.Revoke(st, "alice", r.Key, r.Session); ok || err != nil {
			t.Fatalf("revoked twice %+v: %v %v", r, ok, err)
		}
	}
	if list, err := a.Allowances(st, "alice"); err != nil || len(list) != 0 {
		t.Fatalf("after revoke: %+v %v", list, err)
	}
	// Asked again, each.
	for _, r := range [][2]string{{"ls", "ls -la"}, {"make", "make test\n(in sub)"}, {"echo", "echo old"}} {
		again := askApproval(c, "alice", r[0], r[1])
		alice.answer(testFrontend, "alice", alice.next().RequestID, ipc.DecisionDeny)
		wantAnswer(t, again, false)
	}
	// Bob's still stands.
	wantAnswer(t, askApproval(c, "bob", "rm", "rm x"), true)
}
