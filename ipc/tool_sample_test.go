package ipc

import (
	"strings"
	"testing"
)

// TestSampleRequestBounds: what a capsule may ask a client's model, and
// each way out of bounds refused saying why.
func TestSampleRequestBounds(t *testing.T) {
	ok := func() AgentToolSample {
		return AgentToolSample{RequestID: "s0123456789abcdef", CallID: "c1", Name: "t", Messages: []SampleMessage{{Role: "user", Text: "hi"}}, MaxTokens: 10}
	}
	if err := ok().Validate(); err != nil {
		t.Fatal(err)
	}
	many := make([]SampleMessage, MaxSampleMessages+1)
	for i := range many {
		many[i] = SampleMessage{Role: "user", Text: "x"}
	}
	for _, c := range []struct {
		name string
		edit func(*AgentToolSample)
		want string
	}{
		{"short id", func(s *AgentToolSample) { s.RequestID = "s1" }, "request id"},
		{"id with a dot", func(s *AgentToolSample) { s.RequestID = "s0123456789abcdef.*" }, "request id"},
		{"no call", func(s *AgentToolSample) { s.CallID = "" }, "names its tool call"},
		{"no messages", func(s *AgentToolSample) { s.Messages = nil }, "1 to 64 messages"},
		{"too many messages", func(s *AgentToolSample) { s.Messages = many }, "not 65"},
		{"a system role", func(s *AgentToolSample) { s.Messages[0].Role = "system" }, "not user or assistant"},
		{"not UTF-8", func(s *AgentToolSample) { s.Messages[0].Text = "\xff" }, "not UTF-8"},
		{"too much text", func(s *AgentToolSample) { s.SystemPrompt = strings.Repeat("x", MaxSampleText) }, "bytes; at most"},
		{"no tokens", func(s *AgentToolSample) { s.MaxTokens = 0 }, "max_tokens"},
		{"too many tokens", func(s *AgentToolSample) { s.MaxTokens = MaxSampleTokens + 1 }, "max_tokens"},
	} {
		s := ok()
		c.edit(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error saying %q", c.name, err, c.want)
		}
	}
}
