package ipc

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// The events a frontend sees of a turn (DESIGN §5a), all custom payloads
// scoped by session_id (and by principal on the bus): text as it streams,
// each tool call as it starts and finishes, and exactly one final
// AgentResponse whatever ended the turn. docs/agent.md is their contract.

// The topics of a turn's events besides AgentResponseTopic and
// AgentStreamDeltaTopic.
const (
	AgentToolStartedTopic  = "agent.v1.tool.started"
	AgentToolFinishedTopic = "agent.v1.tool.finished"
	// AgentToolProgressTopic carries an AgentToolProgress: a tool's
	// provider (an MCP server's notifications/progress) says how far a
	// call in flight got. Not the agent's: the provider publishes it for
	// the call's principal, and it names the call, not the session.
	AgentToolProgressTopic = "agent.v1.tool.progress"
	// AgentToolLogTopic carries an AgentToolLog: a log message a tool's
	// provider emits during a call in flight (an MCP server's
	// notifications/message), published like progress.
	AgentToolLogTopic = "agent.v1.tool.log"
)

// The outcomes of a final AgentResponse.
const (
	OutcomeAnswer       = "answer"        // the model answered
	OutcomeEmpty        = "empty"         // the model produced no text and no tool call
	OutcomeError        = "error"         // a provider, tool dispatch or pipeline error
	OutcomeTimeout      = "timeout"       // a phase exceeded its limit
	OutcomeIterationCap = "iteration_cap" // the loop hit max_iterations
	OutcomeCancelled    = "cancelled"     // a cancel_turn, or a newer prompt pre-empted it
	// OutcomeBusy: the agent did not take the prompt (its queue for the
	// principal was full); nothing ran, and the same prompt may be sent
	// again. The kernel answers it on the agent's behalf.
	OutcomeBusy = "busy"
)

// AgentStreamDelta is a piece of the answer's text as the provider streams
// it, on AgentStreamDeltaTopic.
type AgentStreamDelta struct {
	SessionID string `json:"session_id"`
	RequestID string `json:"request_id,omitempty"`
	Delta     string `json:"delta"`
	TurnID    string `json:"turn_id,omitempty"` // see AgentResponse.TurnID
	// Reasoning marks a piece of the model's reasoning (thinking), which
	// is never part of the answer: a frontend that does not show it
	// skips it (an editor shows it apart, astrid acp's
	// agent_thought_chunk). Absent on the answer's text, so older
	// readers of the answer are unchanged.
	Reasoning bool `json:"reasoning,omitempty"`
}

// AgentToolStarted says the orchestrator dispatched a tool call, on
// AgentToolStartedTopic.
type AgentToolStarted struct {
	SessionID string          `json:"session_id"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	TurnID    string          `json:"turn_id,omitempty"` // see AgentResponse.TurnID
}

// AgentToolFinished says a tool call's result arrived, on
// AgentToolFinishedTopic. Summary is the start of the result (at most
// ToolSummaryRunes runes); the model sees the whole of it.
type AgentToolFinished struct {
	SessionID  string `json:"session_id"`
	CallID     string `json:"call_id"`
	Name       string `json:"name"`
	IsError    bool   `json:"is_error"`
	Summary    string `json:"summary"`
	DurationMS int64  `json:"duration_ms"`
	TurnID     string `json:"turn_id,omitempty"` // see AgentResponse.TurnID
}

// AgentToolProgress says how far a tool call in flight got, on
// AgentToolProgressTopic. It carries no session or turn: the provider
// knows only the call, so a frontend shows it for a call id one of its
// own turns announced (agent.v1.tool.started) and drops any other.
// Progress only informs; nothing waits on it.
type AgentToolProgress struct {
	CallID   string  `json:"call_id"`
	Name     string  `json:"name"`
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"` // 0: unknown
	// Message is the provider's words (at most ToolSummaryRunes runes).
	Message string `json:"message,omitempty"`
}

// Text is the one line frontends show for p (astrid -p on stderr, chat,
// the web view).
func (p AgentToolProgress) Text() string {
	s := fmt.Sprintf("%s: %s", p.Name, formatAmount(p.Progress))
	if p.Total > 0 {
		s += "/" + formatAmount(p.Total)
	}
	if p.Message != "" {
		s += " " + p.Message
	}
	return s
}

// formatAmount prints a progress amount without a fraction when it has none.
func formatAmount(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// ToolSummaryRunes bounds AgentToolFinished.Summary.
const ToolSummaryRunes = 200

// PromptContext is what a frontend may put in a UserInput's context:
// a cancel request, or the provider and model for this turn (each
// overriding the orchestrator's configured one when not empty).
type PromptContext struct {
	Action   string `json:"action,omitempty"` // ActionCancelTurn or empty
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// TurnID, when set ([A-Za-z0-9_-]{1,64}, chosen by the frontend), is
	// echoed on every event of the turn it starts, and makes a cancel_turn
	// cancel only that turn.
	TurnID string `json:"turn_id,omitempty"`
}

// ActionCancelTurn in a PromptContext cancels the session's running turn.
const ActionCancelTurn = "cancel_turn"

// ActionCompact in a PromptContext asks the agent to compact the session's
// older history now (/compact, astrid session compact): the turn makes one
// summary request and ends with OutcomeCompacted, or with OutcomeError
// saying why nothing was compacted.
const ActionCompact = "compact"

// OutcomeCompacted ends a turn that was an ActionCompact: Text says what
// was compacted. No answer of the model's is in it.
const OutcomeCompacted = "compacted"

// AgentCompactedTopic carries an AgentCompacted: the agent compacted (or
// tried to compact) a session's older history before a model request.
const AgentCompactedTopic = "agent.v1.compacted"

// AgentCompacted says what a compaction did (docs/agent.md, "Context
// window"). OK false: it failed (Reason says why) and the history was sent
// as it was; nothing is lost either way, the session store keeps every
// message.
type AgentCompacted struct {
	SessionID string `json:"session_id"`
	TurnID    string `json:"turn_id,omitempty"` // see AgentResponse.TurnID
	OK        bool   `json:"ok"`
	// Messages is how many stored messages the summary now stands for
	// (all of them up to that point of the history).
	Messages int `json:"messages"`
	// TokensBefore and TokensAfter are the estimated input tokens of the
	// request before and after (0 after a failure); Window is the model's
	// context window the estimate was held against.
	TokensBefore int    `json:"tokens_before"`
	TokensAfter  int    `json:"tokens_after,omitempty"`
	Window       int    `json:"window"`
	Reason       string `json:"reason,omitempty"`
}

// Text is the one line frontends show for c (astrid -p on stderr, chat,
// the web view).
func (c AgentCompacted) Text() string {
	if !c.OK {
		return fmt.Sprintf("context: nothing compacted (%s); the history was sent whole", c.Reason)
	}
	return fmt.Sprintf("context: the first %d messages were summarized to fit the model's window (about %d → %d of %d tokens); the session keeps them all",
		c.Messages, c.TokensBefore, c.TokensAfter, c.Window)
}
