package config

import (
	"github.com/astrid-go/astrid/internal/egress"

	"errors"
	"fmt"
	"strconv"
	"strings"
)

// maxRestarts bounds health.max_restarts: a capsule that failed this often
// will not come back by itself.
const maxRestarts = 100

// maxWasmMemoryMiB is the 32-bit wasm address space.
const maxWasmMemoryMiB = 4096

// validate checks values the decoder cannot: ranges, the relations between
// limits, the log level and the allowlist syntax.
func (c Config) validate(file string, at map[string]written) error {
	var probs []error
	bad := func(key, format string, args ...any) {
		pos, ok := at[key]
		if !ok { // a key of an array element falls back to the element, then to its array
			if i := strings.LastIndexByte(key, ']'); i >= 0 {
				pos, ok = at[key[:i+1]]
			}
			if base, _, cut := strings.Cut(key, "["); cut && !ok {
				pos = at[base]
			}
		}
		probs = append(probs, &Problem{File: file, Line: pos.line, Column: pos.column, Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	// present picks, of two related keys, the one the operator wrote, so the
	// error points at a line of their file.
	present := func(a, b string) string {
		if _, ok := at[a]; ok {
			return a
		}
		return b
	}

	l := c.Limits
	for _, f := range []struct {
		key string
		v   int
	}{
		{"limits.route_budget_bytes", l.RouteBudgetBytes},
		{"limits.max_message_bytes", l.MaxMessageBytes},
		{"limits.rate_bytes_per_sec", l.RateBytesPerSec},
		{"limits.rate_burst_bytes", l.RateBurstBytes},
		{"limits.queue_depth", l.QueueDepth},
		{"limits.wasm_pool_size", l.WasmPoolSize},
		{"limits.wasm_memory_mib", l.WasmMemoryMiB},
		{"limits.max_component_bytes", l.MaxComponentBytes},
	} {
		if f.v <= 0 {
			bad(f.key, "must be a positive integer, got %d", f.v)
		}
	}
	if l.CPUBudgetMsPerSec < 0 {
		bad("limits.cpu_budget_ms_per_sec", "must be 0 (no budget) or a positive integer, got %d", l.CPUBudgetMsPerSec)
	}
	h := c.Health
	if h.MaxRestarts < 0 || h.MaxRestarts > maxRestarts {
		bad("health.max_restarts", "must be 0 (never restart) to %d, got %d", maxRestarts, h.MaxRestarts)
	}
	if h.RestartBackoff.Duration <= 0 {
		bad("health.restart_backoff", "must be a positive duration, got %s", h.RestartBackoff)
	}
	if h.MaxRestartBackoff.Duration < h.RestartBackoff.Duration {
		bad(present("health.max_restart_backoff", "health.restart_backoff"), "max_restart_backoff (%s) must be at least restart_backoff (%s)", h.MaxRestartBackoff, h.RestartBackoff)
	}
	if c.GC.SessionMaxAge.Duration < 0 {
		bad("gc.session_max_age", "must be 0 (keep every session) or a positive duration, got %s", c.GC.SessionMaxAge)
	}
	if l.WasmMemoryMiB > maxWasmMemoryMiB {
		bad("limits.wasm_memory_mib", "must be at most %d (the 32-bit wasm address space), got %d", maxWasmMemoryMiB, l.WasmMemoryMiB)
	}
	if l.MaxMessageBytes > 0 && l.RouteBudgetBytes > 0 && l.RouteBudgetBytes < l.MaxMessageBytes {
		bad(present("limits.route_budget_bytes", "limits.max_message_bytes"),
			"route_budget_bytes (%d) must be at least max_message_bytes (%d), or an admitted message might not fit a route",
			l.RouteBudgetBytes, l.MaxMessageBytes)
	}
	if l.MaxMessageBytes > 0 && l.RateBurstBytes > 0 && l.RateBurstBytes < l.MaxMessageBytes {
		bad(present("limits.rate_burst_bytes", "limits.max_message_bytes"),
			"rate_burst_bytes (%d) must be at least max_message_bytes (%d), or a message of the maximum size could never be sent",
			l.RateBurstBytes, l.MaxMessageBytes)
	}
	if c.CallDeadline.Duration <= 0 {
		bad("call_deadline", "must be a positive duration, got %s", c.CallDeadline)
	}
	if c.MCPHandshakeTimeout.Duration <= 0 {
		bad("mcp_handshake_timeout", "must be a positive duration, got %s", c.MCPHandshakeTimeout)
	}
	if c.StoreLockWait.Duration <= 0 {
		bad("store_lock_wait", "must be a positive duration, got %s", c.StoreLockWait)
	}
	switch strings.ToLower(c.Log.Level) {
	case "debug", "info", "warn", "error":
	default:
		bad("log.level", "unknown level %q; use debug, info, warn or error", c.Log.Level)
	}
	for i, entry := range c.Egress.Allow {
		if err := checkEndpoint(entry); err != nil {
			bad("egress.allow["+strconv.Itoa(i)+"]", "%v", err)
		}
	}
	c.Daemon.validate(bad)
	c.Uplink.validate(bad)
	c.Admin.validate(bad)
	c.NATS.validate(bad)
	c.Telemetry.validate(bad)
	c.Sandbox.validate(bad)
	c.Approval.validate(bad)
	c.Hooks.validate(bad)
	c.MCP.validate(bad)
	return errors.Join(probs...)
}

// checkEndpoint accepts exactly the allowlist forms the egress client
// honours (it matches on the address actually connected, so a host name other
// than localhost cannot be honoured and is refused here, not at every load).
func checkEndpoint(s string) error {
	if strings.Contains(s, "://") {
		return fmt.Errorf("%q has a scheme; write host:port or a CIDR, such as 127.0.0.1:11434", s)
	}
	return egress.CheckAllowLocal(s)
}
