package ipc

import "encoding/json"

// The events a frontend sees of a turn (DESIGN §5a), all custom payloads
// scoped by session_id (and by principal on the bus): text as it streams,
// each tool call as it starts and finishes, and exactly one final
// AgentResponse whatever ended the turn. docs/agent.md is their contract.

// The topics of a turn's events besides AgentResponseTopic and
// AgentStreamDeltaTopic.
const (
	AgentToolStartedTopic  = "agent.v1.tool.started"
	AgentToolFinishedTopic = "agent.v1.tool.finished"
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
