package wasm

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// A wasm guest's approval_request asks the frontend and gets its answer:
// approved, then denied.
func TestApprovalRequestFromAGuest(t *testing.T) {
	f := loadHostile(t, Options{})
	frontend, questions := asFrontend(t, f, ipc.ApprovalRequestTopic, ipc.ApprovalResponseTopic("*"))
	for _, tc := range []struct {
		decision string
		want     bool
	}{{ipc.DecisionApprove, true}, {ipc.DecisionDeny, false}} {
		type answer struct {
			Approved bool   `json:"approved"`
			Code     uint32 `json:"code"`
		}
		got := make(chan answer, 1)
		go func() {
			var a answer
			v, err := f.invoke(t, context.Background(), "ask", `{"Action":"run_shell_command","Resource":"make test"}`)
			if err == nil {
				err = json.Unmarshal(v.Payload, &a)
			}
			if err != nil {
				a.Code = uint32(hostapi.CodeInternal)
			}
			got <- a
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		d, err := questions.Recv(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		var q ipc.ApprovalRequired
		if err := q.UnmarshalJSON(ipc.GuestBytes(d.Envelope.Payload)); err != nil || q.Action != "run_shell_command" || q.Resource != "make test" || q.Reason != "Capsule 'hostile' requests approval" {
			t.Fatalf("question %+v (%v)", q, err)
		}
		b, _ := ipc.ApprovalResponse{RequestID: q.RequestID, Decision: tc.decision}.MarshalJSON()
		if _, err := f.d.Publish(frontend, ipc.ApprovalResponseTopic(q.RequestID), b); err != nil {
			t.Fatal(err)
		}
		if a := <-got; a.Code != 0 || a.Approved != tc.want {
			t.Fatalf("%s: the guest got %+v", tc.decision, a)
		}
	}
}

// frontendTarget is a frontend's dispatch target: it binds no interceptor,
// so it is never invoked.
type frontendTarget struct{}

func (frontendTarget) Intercept(context.Context, dispatch.Invocation) (dispatch.Verdict, error) {
	return dispatch.Verdict{}, dispatch.ErrNotSupported
}

// asFrontend registers testFrontend, which hears questions and publishes
// on answers, and subscribes it to the default principal's questions.
func asFrontend(t *testing.T, f *fixture, questions, answers string) (dispatch.Caller, *bus.Route) {
	t.Helper()
	if err := f.d.Register(dispatch.CapsuleACL{ID: testFrontend, Publish: []string{answers}, Subscribe: []string{questions}}, frontendTarget{}); err != nil {
		t.Fatal(err)
	}
	frontend := dispatch.Caller{Capsule: testFrontend, Principal: ipc.DefaultPrincipal}
	r, err := f.d.Subscribe(frontend, questions, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return frontend, r
}
