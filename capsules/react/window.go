package react

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/sdk"
)

// The [env] keys of context management (docs/agent.md, "Context window").
const (
	// envContextWindows is a table "<provider>:<model>=<tokens>", comma
	// separated: the operator's word on a model's window, ahead of what
	// the provider said (the registry's entry) and of the default.
	envContextWindows = "context_windows"
	// envCompactPct is the share of the window, in percent, that a
	// request's estimated input may reach before older turns are
	// compacted.
	envCompactPct = "compact_threshold_pct"
	// envToolResultMax bounds a tool result of an earlier round in what
	// the model is sent, in bytes (head and tail kept, with a note).
	envToolResultMax = "tool_result_max_bytes"

	// DefaultContextWindow is the window of a model nobody sized.
	DefaultContextWindow = 128000
	defaultCompactPct    = 80
	// defaultToolResultMax keeps an earlier round's result to 32 KiB.
	defaultToolResultMax = 32 << 10
	// bytesPerToken estimates tokens from the request's JSON: a
	// conservative figure for English text and JSON (real tokenizers give
	// about four bytes a token), so the estimate errs towards compacting.
	bytesPerToken = 4
)

// contextWindow is the window of provider's model: the [env] table, else
// what the provider reported through the registry (registry, 0 when not
// asked or silent), else DefaultContextWindow.
func contextWindow(c *sdk.Call, provider, model string, registry uint64) int {
	if raw, _ := c.Config(envContextWindows); strings.TrimSpace(raw) != "" && model != "" {
		table, problems := parseWindows(raw)
		for _, p := range problems {
			c.Log(hostapi.LogWarn, "react: [env] "+envContextWindows+": "+p)
		}
		if n, ok := table[provider+":"+model]; ok {
			return n
		}
	}
	if registry > 0 && registry <= maxWindow {
		return int(registry)
	}
	return DefaultContextWindow
}

// maxWindow bounds a window (tokens): far above any model's, small enough
// that a byte count derived from it cannot overflow.
const maxWindow = 1 << 30

// parseWindows reads the table; entries that do not parse are left out
// and named in problems.
func parseWindows(raw string) (table map[string]int, problems []string) {
	table = map[string]int{}
	want := fmt.Sprintf("<tokens from 1024 to %d>", maxWindow)
	for _, e := range modelTable(raw, want, &problems) {
		n, err := strconv.Atoi(strings.TrimSpace(e.value))
		if err != nil || n < 1024 || n > maxWindow {
			problems = append(problems, fmt.Sprintf("%q: want %s", e.entry, want))
			continue
		}
		table[e.id] = n
	}
	return table, problems
}

// setBudget fixes t's context window and the estimated input (tokens) past
// which a request is compacted first, once per turn.
func setBudget(c *sdk.Call, t *turn, registry uint64) {
	t.Window = contextWindow(c, t.Provider, t.Model, registry)
	pct := positiveConfig(c, envCompactPct, defaultCompactPct)
	if pct > 100 {
		pct = 100
	}
	t.Budget = t.Window / 100 * pct
	t.ToolResultMax = positiveConfig(c, envToolResultMax, defaultToolResultMax)
}

// estimateTokens is the estimated input of a request of n bytes.
func estimateTokens(n int) int { return n / bytesPerToken }
