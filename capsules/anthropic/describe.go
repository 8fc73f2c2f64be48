package anthropic

import "github.com/astrid-go/astrid/ipc"

// providerEntry is the provider as llm.v1.response.describe lists it
// (spec §6.1, ProviderEntry), with the contract's ready/why.
type providerEntry struct {
	ID              string   `json:"id"`
	Description     string   `json:"description"`
	Capabilities    []string `json:"capabilities"`
	RequestTopic    string   `json:"request_topic"`
	StreamTopic     string   `json:"stream_topic"`
	ContextWindow   uint64   `json:"context_window"`
	MaxOutputTokens uint64   `json:"max_output_tokens"`
	Models          []string `json:"models"`
	Ready           bool     `json:"ready"`
	Why             string   `json:"why,omitempty"`
}

type describeResponse struct {
	Providers []providerEntry `json:"providers"`
}

func describe(s settings) describeResponse {
	ready, why := s.ready()
	// The registry names a model <provider>:<entry id>: the id is the
	// model, so `astrid models set anthropic:<model>` reads as it should.
	id := s.model
	if id == "" {
		id = Provider
	}
	return describeResponse{Providers: []providerEntry{{
		ID:              id,
		Description:     "Anthropic Messages API (" + s.model + ")",
		Capabilities:    []string{"text", "tools", "vision", "reasoning"},
		RequestTopic:    ipc.LLMGenerateTopic(Provider),
		StreamTopic:     ipc.LLMStreamTopic(Provider),
		ContextWindow:   s.contextWindow,
		MaxOutputTokens: uint64(s.maxOutputTokens),
		Models:          []string{s.model},
		Ready:           ready,
		Why:             why,
	}}}
}
