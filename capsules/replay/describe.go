package replay

import "github.com/astrid-go/astrid/ipc"

// providerEntry is one provider as llm.v1.response.describe lists it
// (spec/capsules-cli.md §6.1, ProviderEntry).
type providerEntry struct {
	ID           string   `json:"id"`
	Description  string   `json:"description"`
	Capabilities []string `json:"capabilities"`
	RequestTopic string   `json:"request_topic"`
	StreamTopic  string   `json:"stream_topic"`
	// [env] context_window, else nominalWindow; the output size is
	// nominal (the OpenAI-compatible provider's default).
	ContextWindow   uint64 `json:"context_window"`
	MaxOutputTokens uint64 `json:"max_output_tokens"`
}

type describeResponse struct {
	Providers []providerEntry `json:"providers"`
}

// describe is the answer to llm.v1.request.describe: the one provider,
// with a context window of window tokens.
func describe(window int) describeResponse {
	return describeResponse{Providers: []providerEntry{{
		ID:              Provider,
		Description:     "Replays a recorded script (offline, deterministic; docs/replay.md)",
		Capabilities:    []string{"text", "tools", "reasoning"},
		RequestTopic:    ipc.LLMGenerateTopic(Provider),
		StreamTopic:     ipc.LLMStreamTopic(Provider),
		ContextWindow:   uint64(window),
		MaxOutputTokens: 8192,
	}}}
}
