package shell_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/astrid-go/astrid/capsules/approval"
	"github.com/astrid-go/astrid/capsules/promptbuilder"
	"github.com/astrid-go/astrid/capsules/react"
	"github.com/astrid-go/astrid/capsules/replay"
	"github.com/astrid-go/astrid/capsules/session"
	"github.com/astrid-go/astrid/capsules/shell"
	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// bootAgent runs the agent stack astrid runs (react, the prompt builder,
// the session store, the approval capsule ahead of the router, the shell)
// with the replay provider playing script.
func bootAgent(t *testing.T, script string) *sdktest.Kernel {
	t.Helper()
	k := sdktest.NewAgent(t, sdktest.AgentOptions{},
		sdktest.Capsule{Manifest: react.Manifest, New: react.New, Config: map[string]string{"provider": "replay"}},
		sdktest.Capsule{Manifest: promptbuilder.Manifest, New: promptbuilder.New},
		sdktest.Capsule{Manifest: session.Manifest, New: session.New},
		sdktest.Capsule{Manifest: replay.Manifest, New: replay.New, Config: map[string]string{"script": "script.jsonl"}},
		sdktest.Capsule{Manifest: approval.Manifest, New: approval.New},
		sdktest.Capsule{Manifest: shell.Manifest, New: shell.New},
	)
	if err := os.WriteFile(filepath.Join(k.Workspace, "script.jsonl"), []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	return k
}

// shellTurn is a replay script in which the model, asked with prompt,
// calls run_shell_command with command (call id id), then answers with
// what it was given back: "ok: <content>" or "error: <content>" is not
// knowable to a script, so it answers "done <id>" and the test reads the
// result the model got from the session history.
func shellTurn(prompt, id, command string) string {
	args, _ := json.Marshal(map[string]string{"command": command})
	argsJSON, _ := json.Marshal(string(args))
	return `{"match": {"tool_results": ["` + id + `"]}}
{"TextDelta": "done ` + id + `"}
"Done"
{"match": {"user": "` + prompt + `"}}
{"ToolCallStart": {"id": "` + id + `", "name": "run_shell_command"}}
{"ToolCallDelta": {"id": "` + id + `", "args_delta": ` + string(argsJSON) + `}}
{"ToolCallEnd": {"id": "` + id + `"}}
"Done"
`
}

// turn runs prompt to its end, answering every approval question with the
// next of decisions (failing if more come), and returns what happened and
// the questions asked.
func turn(t *testing.T, k *sdktest.Kernel, prompt string, decisions ...string) (sdktest.TurnResult, []ipc.ApprovalRequired) {
	t.Helper()
	tr := k.StartTurn(ipc.DefaultPrincipal, "s1", prompt, ipc.PromptContext{})
	ctx, cancel := context.WithTimeout(context.Background(), k.Timeout)
	defer cancel()
	var r sdktest.TurnResult
	var asked []ipc.ApprovalRequired
	for {
		ev, err := tr.Next(ctx)
		if err != nil {
			t.Fatalf("turn %q did not end: %v (events %+v)", prompt, err, r.Events)
		}
		r.Events = append(r.Events, ev)
		switch ev.Kind {
		case agentclient.EventToolStarted:
			r.Started = append(r.Started, ev.ToolStarted)
		case agentclient.EventToolFinished:
			r.Finished = append(r.Finished, ev.ToolFinished)
		case agentclient.EventApproval:
			asked = append(asked, ev.Approval)
			if len(asked) > len(decisions) {
				t.Fatalf("turn %q: unexpected question %+v", prompt, ev.Approval)
			}
			if err := tr.Answer(ev.Approval.RequestID, decisions[len(asked)-1]); err != nil {
				t.Fatal(err)
			}
		case agentclient.EventFinal:
			r.Final = ev.Final
			if len(asked) != len(decisions) {
				t.Fatalf("turn %q: %d questions, want %d", prompt, len(asked), len(decisions))
			}
			return r, asked
		}
	}
}

var historyReads atomic.Int64

// lastToolResult is the tool result the model was given last on s1.
func lastToolResult(t *testing.T, k *sdktest.Kernel) ipc.ToolCallResult {
	t.Helper()
	corr := "h" + strconv.FormatInt(historyReads.Add(1), 10)
	body := k.SessionAsk(ipc.DefaultPrincipal, session.GetMessagesTopic, map[string]string{"session_id": "s1", "correlation_id": corr},
		session.ReplyTopic(session.OpGetMessages, corr))
	var reply session.MessagesReply
	if err := json.Unmarshal(body, &reply); err != nil {
		t.Fatalf("history: %s (%v)", body, err)
	}
	for i := len(reply.Messages) - 1; i >= 0; i-- {
		if m := reply.Messages[i]; m.Content.Kind == ipc.ContentToolResult {
			return m.Content.ToolResult
		}
	}
	t.Fatalf("no tool result in %+v", reply.Messages)
	return ipc.ToolCallResult{}
}

// Through the agent: the model's command is asked about once, by the
// kernel on the shell's behalf (not a second time by the approval capsule
// for the tool), about the exact command; approved, it runs and its output
// reaches the model; denied, it never runs and the model is told; "always"
// lets that command run again without a question, and only that command.
func TestShellThroughTheAgent(t *testing.T) {
	const (
		marker = "touch approved-marker && echo hello from bash"
		denied = "touch denied-marker"
		always = "echo always >> always.log"
		other  = "echo other >> always.log"
	)
	script := shellTurn("approve once", "c1", marker) + shellTurn("deny", "c2", denied) +
		shellTurn("always first", "c3", always) + shellTurn("always again", "c4", always) + shellTurn("another command", "c5", other)
	k := bootAgent(t, script)

	r, asked := turn(t, k, "approve once", ipc.DecisionApprove)
	if q := asked[0]; q.Resource != marker || q.Action != marker || q.CallID == "" || q.CallID != r.Started[0].CallID {
		t.Fatalf("question %+v; want the exact command, about call %+v", q, r.Started)
	}
	if r.Final.Outcome != ipc.OutcomeAnswer || r.Final.Text != "done c1" || len(r.Finished) != 1 || r.Finished[0].IsError {
		t.Fatalf("turn %+v", r)
	}
	if res := lastToolResult(t, k); res.IsError || res.Content != "hello from bash\n" || !exists(k, "approved-marker") {
		t.Fatalf("the model got %+v", res)
	}

	r, _ = turn(t, k, "deny", ipc.DecisionDeny)
	if len(r.Finished) != 1 || !r.Finished[0].IsError || r.Final.Text != "done c2" {
		t.Fatalf("turn %+v", r)
	}
	if res := lastToolResult(t, k); !res.IsError || res.Content != "Command 'touch denied-marker' was not approved by user" {
		t.Fatalf("the model got %+v", res)
	}
	if exists(k, "denied-marker") {
		t.Fatal("a denied command ran")
	}

	turn(t, k, "always first", ipc.DecisionApproveAlways)
	r, _ = turn(t, k, "always again") // no question
	if len(r.Finished) != 1 || r.Finished[0].IsError {
		t.Fatalf("turn %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(k.Workspace, "always.log")); string(b) != "always\nalways\n" {
		t.Fatalf("always.log %q", b)
	}
	_, asked = turn(t, k, "another command", ipc.DecisionDeny)
	if asked[0].Resource != other {
		t.Fatalf("question %+v", asked[0])
	}
	if b, _ := os.ReadFile(filepath.Join(k.Workspace, "always.log")); string(b) != "always\nalways\n" {
		t.Fatalf("another command ran on the allowance: always.log %q", b)
	}
}

// A command on the deny list reaches the model as an error without any
// question; nothing runs.
func TestDenyListThroughTheAgent(t *testing.T) {
	k := bootAgent(t, shellTurn("wipe", "d1", "touch wiped && rm -rf ~"))
	r, _ := turn(t, k, "wipe")
	if len(r.Finished) != 1 || !r.Finished[0].IsError {
		t.Fatalf("turn %+v", r)
	}
	if res := lastToolResult(t, k); !strings.Contains(res.Content, "is refused and was not run") || !strings.Contains(res.Content, "protected path ~") {
		t.Fatalf("the model got %+v", res)
	}
	if exists(k, "wiped") {
		t.Fatal("a refused command ran")
	}
}

// A command that ignores SIGINT, cancelled from the agent mid-run: the
// turn ends cancelled and the command's process no longer runs (the
// process tracker's SIGKILL after the grace).
func TestCancelledThroughTheAgent(t *testing.T) {
	k := bootAgent(t, shellTurn("hang", "h1", "trap '' INT; sleep 600 & echo $! > pid; wait; wait"))
	tr := k.StartTurn(ipc.DefaultPrincipal, "s1", "hang", ipc.PromptContext{})
	ctx, cancel := context.WithTimeout(context.Background(), k.Timeout)
	defer cancel()
	for {
		ev, err := tr.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == agentclient.EventApproval {
			if err := tr.Answer(ev.Approval.RequestID, ipc.DecisionApprove); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	// Cancel once the command runs (it wrote its pid).
	testutil.WaitFor(t, time.Minute, "the command to start (its pid file)", func() bool { return exists(k, "pid") })
	if err := tr.Cancel(); err != nil {
		t.Fatal(err)
	}
	r := k.Collect(tr)
	if r.Final.Outcome != ipc.OutcomeCancelled {
		t.Fatalf("final %+v", r.Final)
	}
	// The cancel reaches the process tracker asynchronously: wait for the
	// tool's own answer (the shell's result), which comes only once the
	// run has ended.
	res := k.CallTool("run_shell_command", run{Command: "touch marker; rm -rf /"})
	if !res.IsError {
		t.Fatalf("probe %+v", res)
	}
	gone(t, k, "pid")
}
