package replay

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/astrid-go/astrid/sdk"
)

// nominalWindow is the context window describe reports when [env]
// context_window is unset: the OpenAI-compatible provider's default, so a
// prompt builder budgeting by it behaves as it would with a real model. At
// it nothing is refused: a script has no window of its own.
const nominalWindow = 128000

// maxWindow bounds [env] context_window (tokens): far above any model's.
const maxWindow = 1 << 30

// bytesPerToken is how a request's size is counted in tokens: the
// agent's own estimate (capsules/react), so a script's window is the
// window the agent budgets for, as with a real model whose tokenizer the
// estimate approximates.
const bytesPerToken = 4

// window is the context window [env] context_window sets, and whether it
// is enforced (set); a value that is no whole number from 1 to maxWindow
// is an error naming it.
func window(c *sdk.Call) (tokens int, enforced bool, err error) {
	raw, _ := c.Config("context_window")
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nominalWindow, false, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || n > maxWindow {
		return nominalWindow, false, fmt.Errorf("[env] context_window %q is not a whole number of tokens from 1 to %d", raw, maxWindow)
	}
	return n, true, nil
}

// overWindow is the refusal of a request of size bytes over a window of
// limit tokens, worded as OpenAI's context_length_exceeded error, which
// is what a model's server answers: "" when it fits.
func overWindow(size, limit int) string {
	if tokens := size / bytesPerToken; tokens > limit {
		return fmt.Sprintf("context_length_exceeded: This model's maximum context length is %d tokens. However, your messages resulted in %d tokens.", limit, tokens)
	}
	return ""
}
