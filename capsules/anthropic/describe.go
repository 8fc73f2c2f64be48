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
	// Note says the API's own list could not be read, and what is listed
	// instead (astrid models list shows it).
	Note string `json:"note,omitempty"`
}

type describeResponse struct {
	Providers []providerEntry `json:"providers"`
}

// KnownModels are the current Claude model ids (anthropic-sdk-go's Model
// constants) this provider lists besides the configured one until the
// API's own list has been read (offeredModels), so a person can choose
// one with astrid models set before any request.
var KnownModels = []string{"claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5"}

// describe lists one entry per model of models (offeredModels: the
// configured one first, the registry's default for this provider); note,
// when set, rides on each.
func describe(s settings, models []string, windows map[string]uint64, note string) describeResponse {
	ready, why := s.ready()
	// The registry names a model <provider>:<entry id>: the id is the
	// model, so `astrid models set anthropic:<model>` reads as it should.
	out := make([]providerEntry, len(models))
	for i, m := range models {
		out[i] = providerEntry{
			ID:              m,
			Description:     "Anthropic Messages API (" + m + ")",
			Capabilities:    []string{"text", "tools", "vision", "reasoning"},
			RequestTopic:    ipc.LLMGenerateTopic(Provider),
			StreamTopic:     ipc.LLMStreamTopic(Provider),
			ContextWindow:   s.contextWindow,
			MaxOutputTokens: uint64(s.maxOutputTokens),
			Models:          []string{m},
			Ready:           ready,
			Why:             why,
			Note:            note,
		}
		if w := windows[m]; w > 0 && !s.windowSet {
			out[i].ContextWindow = w
		}
	}
	return describeResponse{Providers: out}
}
