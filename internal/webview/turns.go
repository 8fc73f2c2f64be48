package webview

import (
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/astrid-go/astrid/ipc"
)

// Turn is one agent turn as its events showed it.
type Turn struct {
	Principal string `json:"principal"`
	Session   string `json:"session"`
	TurnID    string `json:"turn_id,omitempty"`
	// Prompt is the start of the user's text ("" when the view saw the
	// turn only from its middle on).
	Prompt  string    `json:"prompt"`
	Started time.Time `json:"started"`
	// DurationMS and Outcome are set once the final response came.
	DurationMS int64      `json:"duration_ms,omitempty"`
	Outcome    string     `json:"outcome,omitempty"`
	Tools      []ToolCall `json:"tools"`
	// ToolsLeftOut counts the tool calls past maxToolsPerTurn.
	ToolsLeftOut int `json:"tools_left_out,omitempty"`
}

// ToolCall is one tool call of a turn.
type ToolCall struct {
	CallID    string    `json:"call_id"`
	Name      string    `json:"name"`
	Arguments string    `json:"arguments"`
	Started   time.Time `json:"started"`
	Finished  bool      `json:"finished"`
	// DurationMS is the agent's measure (AgentToolFinished.DurationMS).
	DurationMS int64  `json:"duration_ms,omitempty"`
	IsError    bool   `json:"is_error,omitempty"`
	Summary    string `json:"summary,omitempty"`
}

// Turns is what the page shows of the turns: those running and the last
// ones ended, newest first.
type Turns struct {
	Running []Turn `json:"running"`
	Recent  []Turn `json:"recent"`
}

// Bounds on what the recorder keeps, whatever the bus carries.
const (
	maxRunningTurns = 256
	maxToolsPerTurn = 64
	maxTextRunes    = 200
)

type turnKey struct{ principal, session, turn string }

// recorder follows turns from their events: a prompt starts one, tool
// events add to it, a final response ends it.
type recorder struct {
	keep int

	mu      sync.Mutex
	running map[turnKey]*Turn
	recent  []Turn // oldest first, at most keep
}

func newRecorder(keep int) *recorder {
	return &recorder{keep: keep, running: map[turnKey]*Turn{}}
}

// observe takes one event of a turn topic.
func (r *recorder) observe(e *ipc.Envelope) {
	at := time.Unix(0, e.Timestamp).UTC()
	body := ipc.GuestBytes(e.Payload)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch e.Topic {
	case ipc.UserPromptTopic:
		var in ipc.UserInput
		if json.Unmarshal(body, &in) != nil || in.Text == "" || in.SessionID == "" {
			return // a cancel, or nothing the agent runs
		}
		var pc ipc.PromptContext
		if len(in.Context) > 0 && json.Unmarshal(in.Context, &pc) == nil && pc.Action != "" {
			return
		}
		t := r.turn(turnKey{e.Principal, in.SessionID, pc.TurnID}, at)
		t.Prompt = clip(in.Text)
	case ipc.AgentToolStartedTopic:
		var ev ipc.AgentToolStarted
		if json.Unmarshal(body, &ev) != nil {
			return
		}
		t := r.turn(turnKey{e.Principal, ev.SessionID, ev.TurnID}, at)
		if len(t.Tools) >= maxToolsPerTurn {
			t.ToolsLeftOut++
			return
		}
		t.Tools = append(t.Tools, ToolCall{CallID: ev.CallID, Name: ev.Name, Arguments: clip(string(ev.Arguments)), Started: at})
	case ipc.AgentToolFinishedTopic:
		var ev ipc.AgentToolFinished
		if json.Unmarshal(body, &ev) != nil {
			return
		}
		t := r.turn(turnKey{e.Principal, ev.SessionID, ev.TurnID}, at)
		for i := range t.Tools {
			if c := &t.Tools[i]; c.CallID == ev.CallID && !c.Finished {
				c.Finished, c.DurationMS, c.IsError, c.Summary = true, ev.DurationMS, ev.IsError, clip(ev.Summary)
				return
			}
		}
	case ipc.AgentResponseTopic:
		var res ipc.AgentResponse
		if res.UnmarshalJSON(body) != nil || !res.IsFinal {
			return
		}
		k := turnKey{e.Principal, res.SessionID, res.TurnID}
		t := r.running[k]
		if t == nil {
			return
		}
		delete(r.running, k)
		t.Outcome = res.Outcome
		if t.Outcome == "" {
			t.Outcome = "ended"
		}
		t.DurationMS = max(at.Sub(t.Started).Milliseconds(), 0)
		r.recent = append(r.recent, *t)
		if over := len(r.recent) - r.keep; over > 0 {
			r.recent = append(r.recent[:0], r.recent[over:]...)
		}
	}
}

// turn returns the running turn of k, started at at if the view had not
// seen it yet. Lock must be held.
func (r *recorder) turn(k turnKey, at time.Time) *Turn {
	if t := r.running[k]; t != nil {
		return t
	}
	if len(r.running) >= maxRunningTurns {
		r.forgetOldest()
	}
	t := &Turn{Principal: k.principal, Session: k.session, TurnID: k.turn, Started: at, Tools: []ToolCall{}}
	r.running[k] = t
	return t
}

// forgetOldest drops the running turn started first: a flood of prompts
// that never end cannot grow the recorder. Lock must be held.
func (r *recorder) forgetOldest() {
	var oldest turnKey
	var first time.Time
	for k, t := range r.running {
		if first.IsZero() || t.Started.Before(first) {
			oldest, first = k, t.Started
		}
	}
	delete(r.running, oldest)
}

// snapshot copies the turns, newest first.
func (r *recorder) snapshot() Turns {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := Turns{Running: make([]Turn, 0, len(r.running)), Recent: make([]Turn, 0, len(r.recent))}
	for _, t := range r.running {
		c := *t
		c.Tools = append([]ToolCall(nil), t.Tools...)
		out.Running = append(out.Running, c)
	}
	sortNewestFirst(out.Running)
	for i := len(r.recent) - 1; i >= 0; i-- {
		out.Recent = append(out.Recent, r.recent[i])
	}
	return out
}

func sortNewestFirst(ts []Turn) {
	slices.SortFunc(ts, func(a, b Turn) int { return b.Started.Compare(a.Started) })
}

// clip keeps the first maxTextRunes runes of s.
func clip(s string) string {
	n := 0
	for i := range s {
		if n == maxTextRunes {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
