package openai

import "github.com/astrid-go/astrid/ipc"

// providerEntry is the provider as llm.v1.response.describe lists it
// (spec §6.1 ProviderEntry, plus ready and why: PROVIDER-CONTRACT).
type providerEntry struct {
	ID              string   `json:"id"`
	Description     string   `json:"description"`
	Capabilities    []string `json:"capabilities"`
	RequestTopic    string   `json:"request_topic"`
	StreamTopic     string   `json:"stream_topic"`
	ContextWindow   uint64   `json:"context_window"`
	MaxOutputTokens uint64   `json:"max_output_tokens"`
	Models          []string `json:"models,omitempty"`
	Ready           bool     `json:"ready"`
	Why             string   `json:"why,omitempty"`
}

type describeResponse struct {
	Providers []providerEntry `json:"providers"`
}

// describe is the answer to llm.v1.request.describe: one entry, for the
// configured model (there is none to name when a server of the
// operator's has no model set; requests must then name one).
func describe(s settings) describeResponse {
	e := providerEntry{
		ID:              s.model,
		Description:     "OpenAI-compatible Chat Completions at " + redactedURL(s.baseURL),
		Capabilities:    []string{"text", "tools", "vision"},
		RequestTopic:    ipc.LLMGenerateTopic(Provider),
		StreamTopic:     ipc.LLMStreamTopic(Provider),
		ContextWindow:   s.contextWindow,
		MaxOutputTokens: defaultMaxOutputTokens,
		Ready:           true,
	}
	if s.maxOutputTokens > 0 {
		e.MaxOutputTokens = uint64(s.maxOutputTokens)
	}
	if s.model != "" {
		e.Models = []string{s.model}
	} else {
		e.ID = Provider
	}
	if why := s.notReady(); why != "" {
		e.Ready, e.Why = false, why
	} else if s.model == "" {
		e.Ready, e.Why = false, "no model configured for "+s.host()+": printf %s llama3.2 | astrid capsule env set "+CapsuleID+" model (or astrid -p --model …)"
	}
	return describeResponse{Providers: []providerEntry{e}}
}
