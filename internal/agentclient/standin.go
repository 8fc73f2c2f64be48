package agentclient

import "github.com/astrid-go/astrid/ipc"

// ReplayProvider is the offline provider that plays a recorded script
// (docs/replay.md): the default when no model is configured.
const ReplayProvider = "replay"

// StandIn is what a frontend says after final response r when the offline
// replay script answered because nobody chose a provider (no key set, no
// model chosen): that no model answered, and how to configure one. It is
// "" otherwise, --provider replay included (the script asked for on
// purpose).
func StandIn(r ipc.AgentResponse) string {
	if r.Provider != ReplayProvider || !r.Defaulted {
		return ""
	}
	return "no model is configured, so the offline replay script answered, not a model (docs/replay.md). " +
		"To ask a model: set ANTHROPIC_API_KEY or OPENAI_API_KEY (OPENAI_BASE_URL for a local server such as Ollama), " +
		"or choose one with astrid models set; --provider replay runs the script on purpose."
}
