package config

import (
	"github.com/astrid-go/astrid/internal/sandbox"
	"log/slog"
	"slices"
	"strings"
	"time"
)

// Config is the operator's config.toml. Zero values are not defaults: start
// from Default (Load does).
type Config struct {
	Limits       Limits   `toml:"limits"`
	CallDeadline Duration `toml:"call_deadline"`
	// MCPHandshakeTimeout bounds starting an MCP server and its
	// initialize handshake; a server slower than this fails to load.
	MCPHandshakeTimeout Duration `toml:"mcp_handshake_timeout"`
	Egress              Egress   `toml:"egress"`
	Log                 Log      `toml:"log"`
	// StoreLockWait bounds each wait for state.db while another astrid
	// process is using it (internal/store holds the file only while it
	// works on it).
	StoreLockWait Duration `toml:"store_lock_wait"`
	// WatchdogInterval is how often the kernel publishes
	// astrid.v1.watchdog.tick (for each principal it has seen), which the
	// agent's phase limits are enforced on; 0 or less: never.
	WatchdogInterval Duration `toml:"watchdog_interval"`
	// Daemon is `astrid daemon` itself (daemon.go).
	Daemon Daemon `toml:"daemon"`
	// Uplink is the daemon's socket (uplink.go).
	Uplink Uplink `toml:"uplink"`
	// Admin is the daemon's admin HTTP server (admin.go).
	Admin Admin `toml:"admin"`
	// NATS spans the bus across hosts (nats.go); off by default.
	NATS NATS `toml:"nats"`
	// Telemetry is traces and metrics (telemetry.go).
	Telemetry Telemetry `toml:"telemetry"`
	// Sandbox confines the processes capsules start (sandbox.go).
	Sandbox Sandbox `toml:"sandbox"`
	// Approval is what runs without asking (sandbox.go).
	Approval Approval `toml:"approval"`
	// GC is what astrid gc removes (gc.go).
	GC GC `toml:"gc"`
	// Health is the restarts of failed capsules (health.go).
	Health Health `toml:"health"`
	// Hooks are the operator's command hooks (hooks.go).
	Hooks Hooks `toml:"hooks"`
	// MCP is what MCP servers may ask of Astrid (mcp.go).
	MCP MCP `toml:"mcp"`
}

// Limits are the kernel's resource limits (DESIGN §4 and §4b).
type Limits struct {
	RouteBudgetBytes  int `toml:"route_budget_bytes"`
	MaxMessageBytes   int `toml:"max_message_bytes"`
	RateBytesPerSec   int `toml:"rate_bytes_per_sec"`
	RateBurstBytes    int `toml:"rate_burst_bytes"`
	QueueDepth        int `toml:"queue_depth"`
	WasmPoolSize      int `toml:"wasm_pool_size"`
	WasmMemoryMiB     int `toml:"wasm_memory_mib"`
	CPUBudgetMsPerSec int `toml:"cpu_budget_ms_per_sec"` // 0: no CPU budget
	// MaxComponentBytes is the largest wasm component file an installed
	// capsule may have; a larger one is refused before it is read.
	MaxComponentBytes int `toml:"max_component_bytes"`
}

// Egress is the operator's allowlist of local endpoints capsules may reach
// despite the SSRF guard (a local model server, a test server).
type Egress struct {
	Allow []string `toml:"allow"` // "host:port" or CIDR
}

// Log configures the runtime's log/slog output.
type Log struct {
	Level string `toml:"level"` // debug | info | warn | error
}

// Default is the configuration when config.toml is absent or silent.
func Default() Config {
	return Config{
		Limits: Limits{
			RouteBudgetBytes:  4 << 20,
			MaxMessageBytes:   1 << 20,
			RateBytesPerSec:   10 << 20,
			RateBurstBytes:    2 << 20,
			QueueDepth:        64,
			WasmPoolSize:      16,
			WasmMemoryMiB:     64,
			CPUBudgetMsPerSec: 1000,
			MaxComponentBytes: 64 << 20,
		},
		CallDeadline:        Duration{5 * time.Minute},
		MCPHandshakeTimeout: Duration{30 * time.Second},
		Log:                 Log{Level: "warn"},
		StoreLockWait:       Duration{5 * time.Second},
		WatchdogInterval:    Duration{5 * time.Second},
		Uplink:              Uplink{MaxClients: 128, ClientQueue: 256},
		Admin:               Admin{Enabled: true, Listen: "127.0.0.1:0"},
		NATS:                NATS{ClusterName: "astrid"},
		Telemetry:           defaultTelemetry(),
		Approval:            Approval{ConfinedShell: ConfinedShellAsk},
		GC:                  GC{SessionMaxAge: Duration{DefaultSessionMaxAge}},
		Health:              Health{MaxRestarts: 5, RestartBackoff: Duration{time.Second}, MaxRestartBackoff: Duration{time.Minute}},
		Sandbox:             Sandbox{Mode: SandboxEnforce, Read: slices.Clone(sandbox.DefaultSystemRead), Devices: slices.Clone(sandbox.DefaultDevices)},
	}
}

// SlogLevel is Log.Level as a slog.Level (info for anything Load would not
// have accepted).
func (c Config) SlogLevel() slog.Level {
	switch strings.ToLower(c.Log.Level) {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	default:
		return slog.LevelInfo
	}
}
