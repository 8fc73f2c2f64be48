package react_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// fixtureApproverManifest is a test-only approval layer, as the contract
// puts it (docs/agent.md): ahead of the router it holds every read_file
// call, asks on astrid.v1.approval with the call id, and on the answer
// re-publishes the call (approve) or answers it with an error (deny).
var fixtureApproverManifest = []byte(`
[package]
name = "test-fixture-approver"
version = "0.1.0"

[capabilities]
tool_middleware = true

[subscribe]
"tool.v1.request.execute" = { wit = "tool-execute-request", handler = "gate", priority = 50 }
"astrid.v1.approval.response.*" = { wit = "opaque", handler = "answer" }

[publish]
"astrid.v1.approval" = "opaque"
"tool.v1.request.execute" = "tool-execute-request"
"tool.v1.execute.result" = "tool-execute-result"
`)

func newFixtureApprover() *sdk.Capsule {
	c := sdk.New("test fixture: asks before every read_file")
	c.Handle(ipc.ToolRequestExecuteTopic, "gate", func(call *sdk.Call) error {
		var req ipc.ToolExecuteRequest
		if err := req.UnmarshalJSON(call.Payload()); err != nil || req.ToolName != "read_file" {
			return err
		}
		if _, ok, _ := call.KVGet("~approved." + req.CallID); ok {
			return call.KVDelete("~approved." + req.CallID)
		}
		id := "ap_" + req.CallID
		if err := call.KVSet("~held."+id, call.Payload()); err != nil {
			return err
		}
		q, err := ipc.EncodePayload(ipc.ApprovalRequired{RequestID: id, Action: "read_file", Resource: string(req.Arguments), Reason: "fixture", CallID: req.CallID})
		if err != nil {
			return err
		}
		call.Final(nil)
		return call.Publish(ipc.ApprovalRequestTopic, q)
	})
	c.Handle(ipc.ApprovalResponseTopic("*"), "answer", func(call *sdk.Call) error {
		id := strings.TrimPrefix(call.Topic(), ipc.ApprovalResponseTopic(""))
		held, ok, err := call.KVGet("~held." + id)
		if err != nil || !ok {
			return err
		}
		_ = call.KVDelete("~held." + id)
		var req ipc.ToolExecuteRequest
		if err := req.UnmarshalJSON(held); err != nil {
			return err
		}
		var ans ipc.ApprovalResponse
		if err := call.Decode(&ans); err != nil {
			return err
		}
		if ans.Decision == ipc.DecisionDeny {
			res, _ := ipc.ToolExecuteResult{CallID: req.CallID, Result: ipc.ToolCallError(req.CallID, "read_file was not approved by the user")}.MarshalJSON()
			return call.Publish(ipc.ToolExecuteResultTopic, res)
		}
		if err := call.KVSet("~approved."+req.CallID, []byte{1}); err != nil {
			return err
		}
		return call.Publish(ipc.ToolRequestExecuteTopic, held)
	})
	c.Publishes(ipc.ApprovalRequestTopic)
	c.Publishes(ipc.ToolRequestExecuteTopic)
	c.Publishes(ipc.ToolExecuteResultTopic)
	return c
}

// Time a person takes to answer an approval question does not count
// against the tool phase: with a 1 s limit, an answer given after 1.5 s
// still lets the call run and the turn answer. A denial reaches the model
// as an error result.
func TestApprovalWaitDoesNotCountAgainstTheToolPhase(t *testing.T) {
	script := strings.ReplaceAll(readScript, `"The notes say hi."`, `"Done with the notes."`)
	for _, decision := range []string{ipc.DecisionApprove, ipc.DecisionDeny} {
		t.Run(decision, func(t *testing.T) {
			k := boot(t, setup{script: script, react: map[string]string{"tool_timeout_secs": "1"},
				extra: []sdktest.Capsule{{Manifest: fixtureApproverManifest, New: newFixtureApprover}}})
			writeFile(t, k, "notes.txt", "the secret notes")
			turn := k.StartTurn(ipc.DefaultPrincipal, "s1", "read my notes", ipc.PromptContext{})
			ctx, cancel := context.WithTimeout(context.Background(), k.Timeout)
			defer cancel()
			var started ipc.AgentToolStarted
			for {
				ev, err := turn.Next(ctx)
				if err != nil || ev.Kind == agentclient.EventFinal {
					t.Fatalf("no approval question: %+v %v", ev, err)
				}
				if ev.Kind == agentclient.EventToolStarted {
					started = ev.ToolStarted
				}
				if ev.Kind == agentclient.EventApproval {
					if ev.Approval.CallID != started.CallID || started.CallID == "" {
						t.Fatalf("question %+v for call %q", ev.Approval, started.CallID)
					}
					// Longer than the tool phase's limit: the watchdog ticks
					// every 20 ms meanwhile.
					time.Sleep(1500 * time.Millisecond)
					if err := turn.Answer(ev.Approval.RequestID, decision); err != nil {
						t.Fatal(err)
					}
					break
				}
			}
			r := k.Collect(turn)
			wantFinal(t, r, ipc.OutcomeAnswer, "Done with the notes.")
			if len(r.Finished) != 1 {
				t.Fatalf("finished %+v", r.Finished)
			}
			f := r.Finished[0]
			if decision == ipc.DecisionApprove && (f.IsError || !strings.Contains(f.Summary, "the secret notes")) ||
				decision == ipc.DecisionDeny && (!f.IsError || !strings.Contains(f.Summary, "not approved")) {
				t.Fatalf("finished %+v", f)
			}
		})
	}
}
