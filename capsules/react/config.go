package react

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/sdk"
)

// DefaultProvider is the provider a prompt uses when nothing names one —
// not its context, the provider registry or [env] provider (docs/agent.md):
// the offline replay provider.
const DefaultProvider = "replay"

// The [env] keys of the phase limits and their defaults.
const (
	envPromptTimeout = "prompt_timeout_secs"
	envStreamTimeout = "stream_timeout_secs"
	envToolTimeout   = "tool_timeout_secs"
	envMaxIterations = "max_iterations"
	envMaxInFlight   = "max_turns_in_flight"

	defaultPromptTimeout = 30
	defaultStreamTimeout = 120
	defaultToolTimeout   = 60
	defaultMaxIterations = 25
	// defaultMaxInFlight is half the kernel's default queue depth (64):
	// each running turn has at most one request at a time at the prompt
	// builder, the session store and its provider, so their queues for the
	// principal never overflow at the default.
	defaultMaxInFlight = 32
)

// limits are the phase limits in force for one handler call.
type limits struct {
	promptMS, streamMS, toolMS int64
	maxIterations              int
}

func readLimits(c *sdk.Call) limits {
	return limits{
		promptMS:      int64(positiveConfig(c, envPromptTimeout, defaultPromptTimeout)) * 1000,
		streamMS:      int64(positiveConfig(c, envStreamTimeout, defaultStreamTimeout)) * 1000,
		toolMS:        int64(positiveConfig(c, envToolTimeout, defaultToolTimeout)) * 1000,
		maxIterations: positiveConfig(c, envMaxIterations, defaultMaxIterations),
	}
}

// maxConfigValue bounds a limit (about 11.5 days in seconds), so that a
// millisecond count cannot overflow.
const maxConfigValue = 1_000_000

// positiveConfig reads [env] key as a positive integer. Unset or empty
// gives def silently; anything else that is not a positive integer up to
// maxConfigValue (quotes and spaces around it are tolerated, as upstream's
// values arrive quoted) gives def with a warning, logged once per value
// per kernel.
func positiveConfig(c *sdk.Call, key string, def int) int {
	raw, ok := c.Config(key)
	v := strings.Trim(strings.TrimSpace(raw), `"'`)
	if !ok || v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err == nil && n > 0 && n <= maxConfigValue {
		return n
	}
	// Logged once per (key, value) in this kernel, not on every event.
	marker := keyWarned + key
	if seen, ok, _ := c.KVGet(marker); !ok || string(seen) != raw {
		_ = c.KVSet(marker, []byte(raw)) // not kept: the warning repeats on the next event, nothing worse
		c.Log(hostapi.LogWarn, fmt.Sprintf("react: [env] %s = %q is not a whole number from 1 to %d; using %d", key, raw, maxConfigValue, def))
	}
	return def
}

// configText reads a text [env] key, trimmed.
func configText(c *sdk.Call, key, def string) string {
	if v, ok := c.Config(key); ok {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return def
}
