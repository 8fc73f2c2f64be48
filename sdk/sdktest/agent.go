package sdktest

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/ipc"
)

// AgentOptions configure NewAgent.
type AgentOptions struct {
	// WatchdogInterval is how often the kernel ticks the agent's phase
	// limits; 20 ms when zero, so a test of a timeout waits little past
	// the limit it sets.
	WatchdogInterval time.Duration
}

// NewAgent is New for agent tests: the kernel's watchdog ticks every
// opts.WatchdogInterval. Drive turns with RunPrompt and StartTurn.
func NewAgent(t testing.TB, opts AgentOptions, capsules ...Capsule) *Kernel {
	t.Helper()
	cfg := testConfig()
	cfg.WatchdogInterval.Duration = opts.WatchdogInterval
	if cfg.WatchdogInterval.Duration <= 0 {
		cfg.WatchdogInterval.Duration = 20 * time.Millisecond
	}
	return bootFresh(t, cfg, capsules)
}

// Agent is the kernel as an agent frontend reaches it (agentclient.Kernel).
func (k *Kernel) Agent() agentclient.Kernel { return k.k.Frontend() }

// TurnResult is everything a turn delivered, in order.
type TurnResult struct {
	Events []agentclient.Event
	// Text is the deltas joined.
	Text      string
	Started   []ipc.AgentToolStarted
	Finished  []ipc.AgentToolFinished
	Approvals []ipc.ApprovalRequired
	Final     ipc.AgentResponse
}

// StartTurn publishes a prompt for principal on session and returns the
// running turn (closed when the test ends), failing the test if it cannot
// be sent.
func (k *Kernel) StartTurn(principal, session, text string, pc ipc.PromptContext) *agentclient.Turn {
	k.t.Helper()
	turn, err := agentclient.Start(context.Background(), k.Agent(), agentclient.Prompt{Principal: principal, SessionID: session, Text: text, Context: pc})
	if err != nil {
		k.t.Fatalf("sdktest: prompt: %v", err)
	}
	k.t.Cleanup(turn.Close)
	return turn
}

// Collect reads turn's events up to and including the final response,
// failing the test if it does not come within k.Timeout.
func (k *Kernel) Collect(turn *agentclient.Turn) TurnResult {
	k.t.Helper()
	var r TurnResult
	ctx, cancel := context.WithTimeout(context.Background(), k.Timeout)
	defer cancel()
	var text strings.Builder
	for {
		ev, err := turn.Next(ctx)
		if err != nil {
			k.t.Fatalf("sdktest: turn on session %q did not end: %v (events so far: %+v)", turn.SessionID(), err, r.Events)
		}
		r.Events = append(r.Events, ev)
		switch ev.Kind {
		case agentclient.EventDelta:
			text.WriteString(ev.Delta.Delta)
		case agentclient.EventToolStarted:
			r.Started = append(r.Started, ev.ToolStarted)
		case agentclient.EventToolFinished:
			r.Finished = append(r.Finished, ev.ToolFinished)
		case agentclient.EventApproval:
			r.Approvals = append(r.Approvals, ev.Approval)
		case agentclient.EventFinal:
			r.Final = ev.Final
			r.Text = text.String()
			return r
		}
	}
}

// RunPrompt runs one turn to its end (StartTurn, then Collect).
func (k *Kernel) RunPrompt(principal, session, text string, pc ipc.PromptContext) TurnResult {
	k.t.Helper()
	return k.Collect(k.StartTurn(principal, session, text, pc))
}

// RunPromptAnswering runs one turn for principal on session to its end, as
// RunPrompt does, answering the approval questions it causes with
// decisions in order (ipc.DecisionApprove, …); it fails the test at a
// question more than decisions answer, or when fewer came.
func (k *Kernel) RunPromptAnswering(principal, session, text string, decisions ...string) TurnResult {
	k.t.Helper()
	turn := k.StartTurn(principal, session, text, ipc.PromptContext{})
	ctx, cancel := context.WithTimeout(context.Background(), k.Timeout)
	defer cancel()
	var r TurnResult
	var b strings.Builder
	for {
		ev, err := turn.Next(ctx)
		if err != nil {
			k.t.Fatalf("sdktest: turn %q did not end: %v (events so far: %+v)", text, err, r.Events)
		}
		r.Events = append(r.Events, ev)
		switch ev.Kind {
		case agentclient.EventDelta:
			b.WriteString(ev.Delta.Delta)
		case agentclient.EventToolStarted:
			r.Started = append(r.Started, ev.ToolStarted)
		case agentclient.EventToolFinished:
			r.Finished = append(r.Finished, ev.ToolFinished)
		case agentclient.EventApproval:
			r.Approvals = append(r.Approvals, ev.Approval)
			if len(r.Approvals) > len(decisions) {
				k.t.Fatalf("sdktest: turn %q: question %d, %+v, with %d decisions to give", text, len(r.Approvals), ev.Approval, len(decisions))
			}
			if err := turn.Answer(ev.Approval.RequestID, decisions[len(r.Approvals)-1]); err != nil {
				k.t.Fatalf("sdktest: answer: %v", err)
			}
		case agentclient.EventFinal:
			r.Final, r.Text = ev.Final, b.String()
			if len(r.Approvals) != len(decisions) {
				k.t.Fatalf("sdktest: turn %q: %d questions, want %d", text, len(r.Approvals), len(decisions))
			}
			return r
		}
	}
}

// historyReads numbers LastToolResult's requests.
var historyReads atomic.Int64

// LastToolResult is the last tool result the session store holds for
// principal's session: what the model was given.
func (k *Kernel) LastToolResult(principal, session string) ipc.ToolCallResult {
	k.t.Helper()
	corr := "sdktest-history-" + strconv.FormatInt(historyReads.Add(1), 10)
	body := k.SessionAsk(principal, "session.v1.request.get_messages", map[string]string{"session_id": session, "correlation_id": corr},
		ipc.SessionResponseTopic("get_messages", corr))
	var reply struct {
		Messages []ipc.Message `json:"messages"`
	}
	if err := json.Unmarshal(body, &reply); err != nil {
		k.t.Fatalf("sdktest: history of %s: %s (%v)", session, body, err)
	}
	for i := len(reply.Messages) - 1; i >= 0; i-- {
		if m := reply.Messages[i]; m.Content.Kind == ipc.ContentToolResult {
			return m.Content.ToolResult
		}
	}
	k.t.Fatalf("sdktest: no tool result in session %s: %+v", session, reply.Messages)
	return ipc.ToolCallResult{}
}
