package react

import (
	"encoding/json"
	"fmt"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// The volatile KV keys (hostapi.KV: '~' keys live in the kernel's memory
// only; a restart forgets every turn, as it forgets every call in flight).
const (
	keyTurn     = "~react.turn."     // + session id → turn
	keyFrame    = "~react.frame."    // + session id → frame (system prompt, tools)
	keyRequest  = "~react.req."      // + LLM request id → session id
	keyCall     = "~react.call."     // + call id → session id
	keyResult   = "~react.result."   // + call id → the result's content
	keyApproval = "~react.approval." // + approval request id → session id
	keySeq      = "~react.seq"       // the id counter
	keyWarned   = "~react.warned."   // + [env] key → the bad value warned about
)

// stateVersion is turn.Version; a record of another version is dropped.
const stateVersion = 1

// phase is where a turn stands.
type phase string

// The phases of a running turn (Idle is the absence of a turn record).
const (
	phasePrompt phase = "prompt_build"
	phaseStream phase = "streaming"
	phaseTools  phase = "tools"
)

// turn is one session's running turn. It is small on purpose: every stream
// event reads and writes it; the large, fixed part (system prompt, tools)
// is the frame, read once per model request.
type turn struct {
	Version   int    `json:"v"`
	SessionID string `json:"session_id"`
	TurnID    string `json:"turn_id,omitempty"`
	Phase     phase  `json:"phase"`
	// RequestID is the assemble request's id in phasePrompt, the current
	// model request's in phaseStream and phaseTools.
	RequestID string `json:"request_id"`
	Provider  string `json:"provider"`
	Model     string `json:"model"`
	// Defaulted: nobody chose Provider (chooseModel); the final response
	// says so.
	Defaulted bool `json:"defaulted,omitempty"`
	// Usage sums the Usage events of the turn's model requests (nil: none
	// came).
	Usage *ipc.Usage `json:"usage,omitempty"`
	// StoredUsage is the part of Usage the session's totals already hold
	// (appendTurn).
	StoredUsage ipc.Usage `json:"stored_usage,omitzero"`
	// Streamers are the capsules that intercept the provider's generate
	// topic: only their stream events are taken.
	Streamers []string `json:"streamers,omitempty"`
	// PhaseStart is when the phase began (ms, host clock); in phaseStream,
	// when the last event came.
	PhaseStart int64 `json:"phase_start_ms"`
	// Iterations counts the model requests of this turn.
	Iterations int            `json:"iterations"`
	Text       string         `json:"text,omitempty"`
	Streamed   []streamedCall `json:"streamed,omitempty"`
	Calls      []toolCall     `json:"calls,omitempty"`
	// Approvals are the pending approval questions of this round:
	// approval request id → call id. While any is pending the tool
	// phase's clock stands still, from PausedAt.
	Approvals map[string]string `json:"approvals,omitempty"`
	PausedAt  int64             `json:"paused_at_ms,omitempty"`
	// Prefix is the prompt builder's user_context_prefix, put before the
	// last user message of every request of the turn (never stored).
	Prefix string `json:"prefix,omitempty"`

	// Context management (window.go, compact.go). Window is the model's
	// context window and Budget the estimated input tokens past which a
	// request is compacted first; ToolResultMax bounds an earlier round's
	// tool result in what is sent.
	Window        int `json:"window,omitempty"`
	Budget        int `json:"budget,omitempty"`
	ToolResultMax int `json:"tool_result_max,omitempty"`
	// Upto and Summarized say where the view sent last starts in the
	// stored history: with a summary (message 0) standing for its first
	// Upto messages, or at the start.
	Upto       int  `json:"upto,omitempty"`
	Summarized bool `json:"summarized,omitempty"`
	// Compacting is the compaction in flight (phaseCompact); Compactions
	// counts this turn's; NoCompact: one failed, send as is.
	Compacting  *compactState `json:"compacting,omitempty"`
	Compactions int           `json:"compactions,omitempty"`
	NoCompact   bool          `json:"no_compact,omitempty"`
	// Announce is a compaction's event, published with the next request
	// (which knows the tokens after it).
	Announce *ipc.AgentCompacted `json:"announce,omitempty"`
}

// streamedCall is a tool call as the model streams it.
type streamedCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Args string `json:"args"`
}

// toolCall is one call of the current round.
type toolCall struct {
	// CallID is the id on the bus (minted here); ModelID the model's own,
	// which the history keeps.
	CallID  string `json:"call_id"`
	ModelID string `json:"model_id"`
	// LLMName is the name as the model spelled it; Name the tool's name on
	// the bus (ipc.ToolNameFromLLM).
	LLMName string `json:"llm_name"`
	Name    string `json:"name"`
	// Args are the arguments, valid JSON; nil when the model's were not
	// (the call was then answered here and never dispatched).
	Args    json.RawMessage `json:"args,omitempty"`
	Started int64           `json:"started_ms"`
	Done    bool            `json:"done,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
	// Hooked: its result is in and the after-tool hook was asked about
	// it; the call is done once it answers (after_tool.go).
	Hooked bool `json:"hooked,omitempty"`
}

// frame is what the prompt builder fixed for the whole turn.
type frame struct {
	System string                  `json:"system"`
	Tools  []ipc.LLMToolDefinition `json:"tools"`
}

// loadTurn reads session's running turn; ok is false when it is idle. A
// record that does not decode, or of another version, is dropped (logged).
func loadTurn(c *sdk.Call, session string) (*turn, bool) {
	raw, ok, err := c.KVGet(keyTurn + session)
	if err != nil || !ok {
		return nil, false
	}
	var t turn
	if err := json.Unmarshal(raw, &t); err != nil || t.Version != stateVersion || t.SessionID != session {
		c.Log(hostapi.LogWarn, fmt.Sprintf("react: session %q: dropped an unreadable turn record", session))
		dropKey(c, keyTurn+session)
		return nil, false
	}
	return &t, true
}

func saveTurn(c *sdk.Call, t *turn) error {
	t.Version = stateVersion
	raw, err := json.Marshal(t)
	if err != nil {
		return err
	}
	if err := c.KVSet(keyTurn+t.SessionID, raw); err != nil {
		return fmt.Errorf("react: session %q: saving the turn: %w", t.SessionID, err)
	}
	return nil
}

func loadFrame(c *sdk.Call, session string) (frame, error) {
	var f frame
	raw, ok, err := c.KVGet(keyFrame + session)
	if err != nil {
		return f, err
	}
	if !ok {
		return f, fmt.Errorf("the turn's prompt (system prompt and tools) is gone from the agent's memory")
	}
	return f, json.Unmarshal(raw, &f)
}

func saveFrame(c *sdk.Call, session string, f frame) error {
	raw, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return c.KVSet(keyFrame+session, raw)
}

// sessionOf reads a routing key (request, call or approval id → session).
func sessionOf(c *sdk.Call, key string) (string, bool) {
	if len(key) > maxKeyBytes {
		return "", false
	}
	v, ok, err := c.KVGet(key)
	if err != nil || !ok {
		return "", false
	}
	return string(v), true
}

// maxKeyBytes is hostapi.KV's key limit.
const maxKeyBytes = 1024

// dropKey deletes a volatile bookkeeping key; a failure is logged, not
// fatal: the keys are '~' keys in the kernel's memory, a lost one is at
// worst a stale entry the turn's end or the next restart clears.
func dropKey(c *sdk.Call, key string) {
	if err := c.KVDelete(key); err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("react: key %s not deleted: %v", key, err))
	}
}

// forget removes every key of t's turn: the turn, its frame and its
// routing keys and results.
func forget(c *sdk.Call, t *turn) {
	keys := []string{keyTurn + t.SessionID, keyFrame + t.SessionID}
	if (t.Phase == phaseStream || t.Phase == phasePrompt || t.Phase == phaseCompact) && t.RequestID != "" {
		keys = append(keys, keyRequest+t.RequestID)
	}
	for _, call := range t.Calls {
		keys = append(keys, keyCall+call.CallID, keyResult+call.CallID)
	}
	for id := range t.Approvals {
		keys = append(keys, keyApproval+id)
	}
	for _, k := range keys {
		if err := c.KVDelete(k); err != nil {
			c.Log(hostapi.LogWarn, fmt.Sprintf("react: session %q: key %s not deleted: %v", t.SessionID, k, err))
		}
	}
}

// addUsage adds one model request's Usage event (its total) to the
// turn's, which sums them.
func (t *turn) addUsage(u ipc.Usage) {
	sum := u
	if t.Usage != nil {
		sum = t.Usage.Add(u)
	}
	t.Usage = &sum
}
