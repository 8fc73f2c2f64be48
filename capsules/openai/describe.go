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
	// Note says the server's own list could not be read, and what is
	// listed instead (astrid models list shows it).
	Note string `json:"note,omitempty"`
}

type describeResponse struct {
	Providers []providerEntry `json:"providers"`
}

// describe is the answer to llm.v1.request.describe: one entry per model
// it can serve (offeredModels: the configured one first, so the registry's
// default is it), all alike but for the id; note, when set, rides on each. A server of the operator's
// with no model configured and no list read yet has none to name: one
// entry, not ready, says how to name one.
func describe(s settings, models []string, windows map[string]uint64, note string) describeResponse {
	base := providerEntry{
		Description:     "OpenAI-compatible Chat Completions at " + redactedURL(s.baseURL),
		Capabilities:    []string{"text", "tools", "vision"},
		RequestTopic:    ipc.LLMGenerateTopic(Provider),
		StreamTopic:     ipc.LLMStreamTopic(Provider),
		ContextWindow:   s.contextWindow,
		MaxOutputTokens: defaultMaxOutputTokens,
		Ready:           true,
		Note:            note,
	}
	if s.maxOutputTokens > 0 {
		base.MaxOutputTokens = uint64(s.maxOutputTokens)
	}
	if why := s.notReady(); why != "" {
		base.Ready, base.Why = false, why
	}
	if len(models) == 0 {
		e := base
		e.ID = Provider
		if e.Ready {
			e.Ready, e.Why = false, "no model configured for "+s.host()+" and it did not list any (astrid models list asks it): printf %s llama3.2 | astrid capsule env set "+CapsuleID+" model (or astrid -p --model …)"
		}
		return describeResponse{Providers: []providerEntry{e}}
	}
	out := make([]providerEntry, len(models))
	for i, m := range models {
		e := base
		e.ID, e.Models = m, []string{m}
		if w := windows[m]; w > 0 && !s.windowSet {
			e.ContextWindow = w
		}
		out[i] = e
	}
	return describeResponse{Providers: out}
}
