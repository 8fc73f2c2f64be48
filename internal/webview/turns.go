package webview

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/yuin/goldmark/parser"

	"github.com/astrid-go/astrid/internal/mdparse"
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
	// Compactions are the turn's compactions of its session's history
	// (the line frontends show, ipc.AgentCompacted.Text), at most
	// maxCompactionsPerTurn.
	Compactions []string `json:"compactions,omitempty"`
	// AnswerID names the final response's text, served as markdown nodes
	// (answer.go) at /api/answer/{id} while the turn is in the recent
	// list: an ended turn's answer never changes, so the page fetches it
	// once rather than in every tick.
	AnswerID string `json:"answer_id,omitempty"`
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
	// Change is a write's or an edit's change, shown as a diff.
	Change *Change `json:"change,omitempty"`
	// Progress is the provider's last report while the call ran
	// (ipc.AgentToolProgress.Text), kept once it finished.
	Progress string `json:"progress,omitempty"`
}

// Turns is what the page shows of the turns: those running and the last
// ones ended, newest first, and the values a call waits for.
type Turns struct {
	Running []Turn `json:"running"`
	Recent  []Turn `json:"recent"`
	// Onboarding are the [env] values capsules asked principals for
	// (ipc.OnboardingTopic) that are still pending, oldest first.
	Onboarding []PendingValue `json:"onboarding,omitempty"`
}

// PendingValue is one required [env] value a capsule asked a principal
// for. The web view cannot answer it (it has no person to ask); it shows
// the question so that whoever watches knows why a call waits, while the
// principal's terminal frontends ask.
type PendingValue struct {
	Principal string    `json:"principal"`
	Capsule   string    `json:"capsule"`
	Key       string    `json:"key"`
	Prompt    string    `json:"prompt"`
	Asked     time.Time `json:"asked"`
}

// Bounds on what the recorder keeps, whatever the bus carries.
const (
	maxRunningTurns = 256
	maxToolsPerTurn = 64
	maxTextRunes    = 200
	// maxCompactionsPerTurn bounds Turn.Compactions (the agent makes at
	// most two a turn).
	maxCompactionsPerTurn = 4
	// maxPending bounds Turns.Onboarding; pendingFor is how long a
	// question is shown with no sign that it ended (an elicit question
	// is not waited on longer).
	maxPending = 32
	pendingFor = 10 * time.Minute
)

type turnKey struct{ principal, session, turn string }

// recorder follows turns from their events: a prompt starts one, tool
// events add to it, a final response ends it.
type recorder struct {
	keep int
	md   parser.Parser // made on the first answer; used under mu

	// answers are the recent turns' answers by AnswerID: the text, parsed
	// and encoded on first request (only a watched daemon pays for it).
	answers    map[string]*keptAnswer
	lastAnswer uint64

	mu      sync.Mutex
	running map[turnKey]*Turn
	recent  []Turn         // oldest first, at most keep
	pending []PendingValue // oldest first, at most maxPending
}

func newRecorder(keep int) *recorder {
	return &recorder{keep: keep, running: map[turnKey]*Turn{}, answers: map[string]*keptAnswer{}}
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
		t := r.turnOf(turnKey{e.Principal, ev.SessionID, ev.TurnID}, at)
		for i := range t.Tools {
			if c := &t.Tools[i]; c.CallID == ev.CallID && c.Arguments == "" {
				// Its finish came first (each topic has its own route).
				c.Arguments, c.Started, c.Change = clip(string(ev.Arguments)), at, changeOf(ev.Name, ev.Arguments)
				return
			}
		}
		if len(t.Tools) >= maxToolsPerTurn {
			t.ToolsLeftOut++
			return
		}
		t.Tools = append(t.Tools, ToolCall{CallID: ev.CallID, Name: ev.Name, Arguments: clip(string(ev.Arguments)), Started: at,
			Change: changeOf(ev.Name, ev.Arguments)})
	case ipc.OnboardingTopic:
		var ev ipc.OnboardingRequired
		if ev.UnmarshalJSON(body) != nil {
			return
		}
		for _, f := range ev.Fields {
			r.ask(PendingValue{Principal: e.Principal, Capsule: clip(ev.CapsuleID), Key: clip(f.Key), Prompt: clip(f.Prompt), Asked: at})
		}
	case ipc.AgentToolFinishedTopic:
		var ev ipc.AgentToolFinished
		if json.Unmarshal(body, &ev) != nil {
			return
		}
		r.settle(e.Principal, at)
		t := r.turnOf(turnKey{e.Principal, ev.SessionID, ev.TurnID}, at)
		for i := range t.Tools {
			if c := &t.Tools[i]; c.CallID == ev.CallID && !c.Finished {
				c.Finished, c.DurationMS, c.IsError, c.Summary = true, ev.DurationMS, ev.IsError, clip(ev.Summary)
				return
			}
		}
		// Before its start: the view reads each topic on its own route, so
		// a fast call's finish can come first. Its start fills it in.
		if len(t.Tools) >= maxToolsPerTurn {
			t.ToolsLeftOut++
			return
		}
		t.Tools = append(t.Tools, ToolCall{CallID: ev.CallID, Name: ev.Name, Started: at.Add(-time.Duration(ev.DurationMS) * time.Millisecond),
			Finished: true, DurationMS: ev.DurationMS, IsError: ev.IsError, Summary: clip(ev.Summary)})
	case ipc.AgentToolProgressTopic:
		var ev ipc.AgentToolProgress
		if json.Unmarshal(body, &ev) != nil {
			return
		}
		r.progress(e.Principal, ev)
	case ipc.AgentCompactedTopic:
		var ev ipc.AgentCompacted
		if json.Unmarshal(body, &ev) != nil {
			return
		}
		t := r.turn(turnKey{e.Principal, ev.SessionID, ev.TurnID}, at)
		if len(t.Compactions) < maxCompactionsPerTurn {
			t.Compactions = append(t.Compactions, clip(ev.Text()))
		}
	case ipc.AgentResponseTopic:
		var res ipc.AgentResponse
		if res.UnmarshalJSON(body) != nil || !res.IsFinal {
			return
		}
		r.settle(e.Principal, at)
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
		if strings.TrimSpace(res.Text) != "" {
			r.lastAnswer++
			t.AnswerID = "a" + strconv.FormatUint(r.lastAnswer, 10)
			kept, left := clipAnswer(res.Text)
			r.answers[t.AnswerID] = &keptAnswer{text: strings.Clone(kept), left: left}
		}
		r.recent = append(r.recent, *t)
		if over := len(r.recent) - r.keep; over > 0 {
			for _, gone := range r.recent[:over] {
				delete(r.answers, gone.AnswerID)
			}
			r.recent = append(r.recent[:0], r.recent[over:]...)
		}
	}
}

// ask records a pending value, once for each (principal, capsule, key),
// dropping the oldest past maxPending. Lock must be held.
func (r *recorder) ask(p PendingValue) {
	r.pending = slices.DeleteFunc(r.pending, func(q PendingValue) bool {
		return q.Principal == p.Principal && q.Capsule == p.Capsule && q.Key == p.Key
	})
	if len(r.pending) >= maxPending {
		r.pending = r.pending[1:]
	}
	r.pending = append(r.pending, p)
}

// settle forgets the principal's questions asked before at: a call of
// theirs that ended, or their turn, was what waited on it (answered or
// refused). A question the principal's other call still waits on is
// forgotten too; it is asked again if that call needs the value. Lock
// must be held.
func (r *recorder) settle(principal string, at time.Time) {
	r.pending = slices.DeleteFunc(r.pending, func(q PendingValue) bool {
		return q.Principal == principal && !q.Asked.After(at)
	})
}

// progress records ev on the principal's running call it names (progress
// names no session or turn; a call id is unique). One about no running
// call of that principal and tool is dropped. Lock must be held.
func (r *recorder) progress(principal string, ev ipc.AgentToolProgress) {
	for _, t := range r.running {
		if t.Principal != principal {
			continue
		}
		for i := range t.Tools {
			if c := &t.Tools[i]; c.CallID == ev.CallID && c.Name == ev.Name && !c.Finished {
				c.Progress = clip(ev.Text())
				return
			}
		}
	}
}

// turnOf returns the turn of k a tool event belongs to: the running one,
// else one just ended (its final response came first, on its own route),
// else a new running one. Lock must be held.
func (r *recorder) turnOf(k turnKey, at time.Time) *Turn {
	if t := r.running[k]; t != nil || k.turn == "" {
		return r.turn(k, at)
	}
	for i := len(r.recent) - 1; i >= 0; i-- {
		if t := &r.recent[i]; t.Principal == k.principal && t.Session == k.session && t.TurnID == k.turn {
			return t
		}
	}
	return r.turn(k, at)
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

// keptAnswer is an answer's text and, once asked for, its nodes encoded.
type keptAnswer struct {
	text string
	left int // bytes of the answer not kept
	enc  []byte
}

// answer is the encoded answer of id, while its turn is recent.
func (r *recorder) answer(id string) ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.answers[id]
	if !ok {
		return nil, false
	}
	if a.enc == nil {
		if r.md == nil {
			r.md = mdparse.New()
		}
		enc, err := json.Marshal(answerDoc(r.md, a.text, a.left))
		if err != nil {
			return nil, false
		}
		a.enc, a.text = enc, ""
	}
	return a.enc, true
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
	for _, p := range r.pending {
		if time.Since(p.Asked) < pendingFor {
			out.Onboarding = append(out.Onboarding, p)
		}
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
