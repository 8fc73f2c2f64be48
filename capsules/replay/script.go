package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/astrid-go/astrid/ipc"
)

// Script is a parsed replay script: its turns in file order.
type Script struct {
	Name  string
	Turns []Turn
}

// Turn is one recorded answer: when it applies and the stream events it
// plays, the last of which is Done or Error.
type Turn struct {
	Match  Match
	Line   int // the line of the turn's match object, for messages
	Events []ipc.StreamEvent
}

// Match says which requests a turn answers. Exactly one of User and
// ToolResults is set.
type Match struct {
	// User, when set, matches a request whose last message is a user
	// message whose text contains *User ("" matches every user message).
	User *string `json:"user,omitempty"`
	// ToolResults, when set, matches a request that ends in tool results
	// (the trailing run of tool messages) for exactly these call ids, in
	// any order.
	ToolResults []string `json:"tool_results,omitempty"`
	// Sent, when set, is a further condition: the text the request sends
	// (its system prompt and every message's text, tool call arguments
	// and tool results) contains *Sent. It is how a script judges what
	// the agent sent, e.g. that a fact of an early turn survived
	// compaction.
	Sent *string `json:"sent,omitempty"`
}

// matchLine is a line that starts a turn: {"match": {...}}.
type matchLine struct {
	Match *Match `json:"match"`
}

// Parse reads a JSONL script; name (a file name) prefixes every error as
// name:line. Blank lines are skipped. Each turn starts with a match line
// and holds one or more stream events, of which exactly the last is Done
// or Error.
func Parse(name string, data []byte) (*Script, error) {
	s := &Script{Name: name}
	var cur *Turn
	finish := func() error {
		if cur == nil {
			return nil
		}
		if n := len(cur.Events); n == 0 || !terminal(cur.Events[n-1]) {
			return fmt.Errorf("%s:%d: the turn does not end with \"Done\" or {\"Error\": ...}", name, cur.Line)
		}
		s.Turns = append(s.Turns, *cur)
		return nil
	}
	for i, line := range bytes.Split(data, []byte("\n")) {
		no := i + 1
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if isMatchLine(line) {
			m, err := parseMatch(line)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, no, err)
			}
			if err := finish(); err != nil {
				return nil, err
			}
			cur = &Turn{Match: m, Line: no}
			continue
		}
		if cur == nil {
			return nil, fmt.Errorf("%s:%d: a stream event before the first {\"match\": ...} line", name, no)
		}
		var ev ipc.StreamEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			return nil, fmt.Errorf("%s:%d: not a match line or a stream event: %w", name, no, err)
		}
		if n := len(cur.Events); n > 0 && terminal(cur.Events[n-1]) {
			return nil, fmt.Errorf("%s:%d: an event after the turn's %s (a turn ends at Done or Error)", name, no, cur.Events[n-1].Kind)
		}
		cur.Events = append(cur.Events, ev)
	}
	if err := finish(); err != nil {
		return nil, err
	}
	if len(s.Turns) == 0 {
		return nil, fmt.Errorf("%s: the script has no turns", name)
	}
	return s, nil
}

// isMatchLine reports whether line is an object whose one key is "match",
// however it is spaced.
func isMatchLine(line []byte) bool {
	var probe map[string]json.RawMessage
	if json.Unmarshal(line, &probe) != nil {
		return false
	}
	_, ok := probe["match"]
	return ok
}

func parseMatch(line []byte) (Match, error) {
	var ml matchLine
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ml); err != nil {
		return Match{}, fmt.Errorf("match line: %w", err)
	}
	if ml.Match == nil {
		return Match{}, errors.New(`match line: "match" must be an object`)
	}
	m := *ml.Match
	switch {
	case m.User != nil && m.ToolResults != nil:
		return Match{}, errors.New(`match line: give "user" or "tool_results", not both`)
	case m.User == nil && len(m.ToolResults) == 0:
		return Match{}, errors.New(`match line: give "user" (a text) or "tool_results" (call ids)`)
	}
	return m, nil
}

func terminal(e ipc.StreamEvent) bool {
	return e.Kind == ipc.StreamDone || e.Kind == ipc.StreamError
}

// Pick returns the first turn, in file order, that answers req, and false
// when none does.
func (s *Script) Pick(req ipc.LLMRequest) (Turn, bool) {
	msgs := req.Messages
	if len(msgs) == 0 {
		return Turn{}, false
	}
	last := msgs[len(msgs)-1]
	awaited := trailingToolResults(msgs)
	var sent *string // built at the first turn that asks
	for _, t := range s.Turns {
		if t.Match.Sent != nil {
			if sent == nil {
				text := sentText(req)
				sent = &text
			}
			if !strings.Contains(*sent, *t.Match.Sent) {
				continue
			}
		}
		switch {
		case t.Match.User != nil:
			text, ok := userText(last)
			if ok && strings.Contains(text, *t.Match.User) {
				return t, true
			}
		case awaited != nil:
			if sameSet(awaited, t.Match.ToolResults) {
				return t, true
			}
		}
	}
	return Turn{}, false
}

// userText is the text of a user message: plain text, or its text parts
// joined by newlines.
func userText(m ipc.Message) (string, bool) {
	if m.Role != ipc.RoleUser {
		return "", false
	}
	switch m.Content.Kind {
	case ipc.ContentText:
		return m.Content.Text, true
	case ipc.ContentMultiPart:
		var parts []string
		for _, p := range m.Content.Parts {
			if p.Type == ipc.PartText {
				parts = append(parts, p.Text)
			}
		}
		return strings.Join(parts, "\n"), true
	}
	return "", false
}

// sentText is what a request sends as text, for Match.Sent: the system
// prompt, then each message's text parts, tool call arguments and tool
// result, one a line.
func sentText(req ipc.LLMRequest) string {
	var b strings.Builder
	b.WriteString(req.System)
	for _, m := range req.Messages {
		switch m.Content.Kind {
		case ipc.ContentText:
			b.WriteString("\n" + m.Content.Text)
		case ipc.ContentMultiPart:
			for _, p := range m.Content.Parts {
				if p.Type == ipc.PartText {
					b.WriteString("\n" + p.Text)
				}
			}
		case ipc.ContentToolCalls:
			for _, call := range m.Content.ToolCalls {
				b.WriteString("\n" + string(call.Arguments))
			}
		case ipc.ContentToolResult:
			b.WriteString("\n" + m.Content.ToolResult.Content)
		}
	}
	return b.String()
}

// trailingToolResults lists the call ids of the tool results that end
// msgs, or nil when the last message is not a tool result.
func trailingToolResults(msgs []ipc.Message) []string {
	var ids []string
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != ipc.RoleTool || m.Content.Kind != ipc.ContentToolResult {
			break
		}
		ids = append(ids, m.Content.ToolResult.CallID)
	}
	return ids
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
