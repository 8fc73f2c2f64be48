package agentclient

import "github.com/astrid-go/astrid/ipc"

// ReplayProvider is the offline provider that plays a recorded script
// (docs/replay.md): the default when no model is configured.
const ReplayProvider = "replay"

// StandIn is what a frontend says after final response r when the turn
// went to the offline replay script because nobody chose a provider (no
// key set, no model chosen), whatever its outcome: that no model answered,
// and how to configure one. It is "" otherwise, --provider replay included
// (the script asked for on purpose).
func StandIn(r ipc.AgentResponse) string {
	if r.Provider != ReplayProvider || !r.Defaulted {
		return ""
	}
	what := "the offline replay script answered, not a model"
	if r.Outcome != ipc.OutcomeAnswer {
		what = "the turn went to the offline replay script, not a model"
	}
	return "no model is configured, so " + what + " (docs/replay.md). " +
		"To ask a model: set ANTHROPIC_API_KEY or OPENAI_API_KEY (OPENAI_BASE_URL for a local server such as Ollama), " +
		"or choose one with astrid models set; --provider replay runs the script on purpose."
}
