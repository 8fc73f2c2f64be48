package config

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDefaultMatchesDesign(t *testing.T) {
	c := Default()
	want := Limits{
		RouteBudgetBytes:  4 * 1024 * 1024,
		MaxMessageBytes:   1024 * 1024,
		RateBytesPerSec:   10 * 1024 * 1024,
		RateBurstBytes:    2 * 1024 * 1024,
		QueueDepth:        64,
		WasmPoolSize:      16,
		WasmMemoryMiB:     64,
		CPUBudgetMsPerSec: 1000,
		MaxComponentBytes: 64 * 1024 * 1024,
	}
	if c.Limits != want {
		t.Errorf("Limits = %+v, want %+v", c.Limits, want)
	}
	if c.CallDeadline.Duration != 5*time.Minute {
		t.Errorf("CallDeadline = %v, want 5m", c.CallDeadline)
	}
	if c.MCPHandshakeTimeout.Duration != 30*time.Second {
		t.Errorf("MCPHandshakeTimeout = %v, want 30s", c.MCPHandshakeTimeout)
	}
	if c.StoreLockWait.Duration != 5*time.Second {
		t.Errorf("StoreLockWait = %v, want 5s", c.StoreLockWait)
	}
	if len(c.Egress.Allow) != 0 {
		t.Errorf("Egress.Allow = %q, want empty", c.Egress.Allow)
	}
	if c.Log.Level != "warn" || c.SlogLevel() != slog.LevelWarn {
		t.Errorf("Log.Level = %q, want warn", c.Log.Level)
	}
	if err := c.validate("default", nil); err != nil {
		t.Errorf("Default() does not validate: %v", err)
	}
}

func TestLoadWithoutAFileIsDefault(t *testing.T) {
	dir := t.TempDir()
	for name, setup := range map[string]func(path string){
		"missing": func(string) {},
		"empty":   func(p string) { writeFile(t, p, "") },
		"comments only": func(p string) {
			writeFile(t, p, "# operator notes\n\n# nothing set\n")
		},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".toml")
			setup(path)
			c, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c, Default()) {
				t.Fatalf("Load = %+v, want Default()", c)
			}
		})
	}
}

func TestLoadFullFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	writeFile(t, path, `
call_deadline = "90s"
mcp_handshake_timeout = "5s"
store_lock_wait = "250ms"
watchdog_interval = "1s"

[limits]
route_budget_bytes = 8388608
max_message_bytes = 2097152
rate_bytes_per_sec = 1048576
rate_burst_bytes = 4194304
queue_depth = 128
wasm_pool_size = 4
wasm_memory_mib = 256
cpu_budget_ms_per_sec = 0
max_component_bytes = 1048576

[egress]
allow = ["127.0.0.1:11434", "localhost:8080", "[::1]:9000", "10.0.0.0/8", "fd00::/8", "127.0.0.1:*"]

[log]
level = "debug"

[uplink]
max_clients = 8
client_queue = 16
principals = ["1001=alice", "1002 = bob"]

[admin]
enabled = false
listen = "[::1]:8088"
[nats]
host_id = "gpu-box"
listen = "0.0.0.0:6222"
routes = ["nats-route://10.0.0.2:6222"]
cluster_name = "lab"
[telemetry]
tracing = "stdout"
otlp_endpoint = "https://collector.example:4318"
trace_file = "logs/traces.jsonl"
metrics = true
[sandbox]
mode = "off"
read = ["/usr"]
devices = ["/dev/null"]
[approval]
confined_shell = "auto"
`)
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Limits: Limits{
			RouteBudgetBytes:  8 << 20,
			MaxMessageBytes:   2 << 20,
			RateBytesPerSec:   1 << 20,
			RateBurstBytes:    4 << 20,
			QueueDepth:        128,
			WasmPoolSize:      4,
			WasmMemoryMiB:     256,
			CPUBudgetMsPerSec: 0,
			MaxComponentBytes: 1 << 20,
		},
		CallDeadline:        Duration{90 * time.Second},
		MCPHandshakeTimeout: Duration{5 * time.Second},
		Egress:              Egress{Allow: []string{"127.0.0.1:11434", "localhost:8080", "[::1]:9000", "10.0.0.0/8", "fd00::/8", "127.0.0.1:*"}},
		Log:                 Log{Level: "debug"},
		StoreLockWait:       Duration{250 * time.Millisecond},
		WatchdogInterval:    Duration{time.Second},
		Uplink:              Uplink{MaxClients: 8, ClientQueue: 16, Principals: []string{"1001=alice", "1002 = bob"}},
		Admin:               Admin{Enabled: false, Listen: "[::1]:8088"},
		NATS:                NATS{HostID: "gpu-box", Listen: "0.0.0.0:6222", Routes: []string{"nats-route://10.0.0.2:6222"}, ClusterName: "lab"},
		Telemetry:           Telemetry{Tracing: "stdout", OTLPEndpoint: "https://collector.example:4318", TraceFile: "logs/traces.jsonl", Metrics: true},
		// A list given replaces the default list; it is not merged.
		Sandbox:  Sandbox{Mode: "off", Read: []string{"/usr"}, Devices: []string{"/dev/null"}},
		Approval: Approval{ConfinedShell: "auto"},
		GC:       Default().GC,
		Health:   Default().Health,
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("Load =\n%+v\nwant\n%+v", c, want)
	}
	if c.SlogLevel() != slog.LevelDebug {
		t.Errorf("SlogLevel = %v", c.SlogLevel())
	}
}

func TestLoadPartialFileKeepsOtherDefaults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	writeFile(t, path, "limits.queue_depth = 8\nlog = { level = \"warn\" }\n")
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Limits.QueueDepth = 8
	want.Log.Level = "warn"
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("Load = %+v, want %+v", c, want)
	}
}

func TestLoadProblemsArePositioned(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string // each line of the error, in order
	}{
		{
			name: "unknown key with a suggestion",
			doc:  "[limits]\nqueue_dept = 3\n",
			want: []string{"config.toml:2:1: limits.queue_dept: unknown key (did you mean limits.queue_depth?)"},
		},
		{
			name: "key under the wrong table",
			doc:  "[log]\nlevel = \"info\"\nqueue_depth = 3\n",
			want: []string{"config.toml:3:1: log.queue_depth: unknown key (did you mean limits.queue_depth?)"},
		},
		{
			name: "negative restarts",
			doc:  "[health]\nmax_restarts = -1\n",
			want: []string{"config.toml:2:1: health.max_restarts: must be 0 (never restart) to 100, got -1"},
		},
		{
			name: "backoff cap below the first wait",
			doc:  "[health]\nrestart_backoff = \"2m\"\n",
			want: []string{"config.toml:2:1: health.restart_backoff: max_restart_backoff (1m0s) must be at least restart_backoff (2m0s)"},
		},
		{
			name: "negative session age",
			doc:  "[gc]\nsession_max_age = \"-1h\"\n",
			want: []string{"config.toml:2:1: gc.session_max_age: must be 0 (keep every session) or a positive duration, got -1h0m0s"},
		},
		{
			name: "sampling names no capsule",
			doc:  "[mcp]\nsampling = [\"../x\"]\n",
			want: []string{"config.toml:2:13: mcp.sampling[0]: \"../x\" is not a capsule id"},
		},
		{
			name: "session command is a relative path",
			doc:  "[mcp]\nsession_commands = [\"bin/x\"]\n",
			want: []string{"mcp.session_commands[0]: \"bin/x\" is neither a bare command name"},
		},
		{
			name: "session read is relative",
			doc:  "[mcp]\nsession_read = [\"node_modules\"]\n",
			want: []string{"mcp.session_read[0]: \"node_modules\" is not an absolute path"},
		},
		{
			name: "unknown table",
			doc:  "[limit]\nqueue_depth = 3\n",
			want: []string{"config.toml:1:2: limit: unknown key (did you mean limits?)"},
		},
		{
			name: "every unknown key is reported",
			doc:  "bogus = 1\n\n[log]\nlevel = \"info\"\nverbose = true\n",
			want: []string{"config.toml:1:1: bogus: unknown key", "config.toml:5:1: log.verbose: unknown key"},
		},
		{
			name: "string for an integer",
			doc:  "[limits]\nqueue_depth = \"64\"\n",
			want: []string{"config.toml:2:15: limits.queue_depth: expected an integer, got a TOML string"},
		},
		{
			name: "float for an integer",
			doc:  "[limits]\nwasm_pool_size = 1.5\n",
			want: []string{"config.toml:2:18: limits.wasm_pool_size: expected an integer, got a TOML float"},
		},
		{
			name: "integer for a table",
			doc:  "limits = 3\n",
			want: []string{"config.toml:1:10: limits: expected a table, got a TOML integer"},
		},
		{
			name: "integer in the allowlist",
			doc:  "[egress]\nallow = [\"localhost:80\", 8080]\n",
			want: []string{"config.toml:2:26: egress.allow: expected an array of strings, got a TOML integer"},
		},
		{
			name: "integer for a duration",
			doc:  "call_deadline = 300\n",
			want: []string{`config.toml:1:17: call_deadline: expected a duration string such as "30s" or "5m", got a TOML integer`},
		},
		{
			name: "bad duration",
			doc:  "\ncall_deadline = \"5 minutes\"\n",
			want: []string{`config.toml:2:17: call_deadline: "5 minutes" is not a duration such as "30s" or "5m"`},
		},
		{
			name: "negative duration",
			doc:  "call_deadline = \"-1s\"\n",
			want: []string{"config.toml:1:1: call_deadline: must be a positive duration, got -1s"},
		},
		{
			name: "zero store lock wait",
			doc:  "store_lock_wait = \"0s\"\n",
			want: []string{"config.toml:1:1: store_lock_wait: must be a positive duration, got 0s"},
		},
		{
			name: "syntax error",
			doc:  "[limits\nqueue_depth = 1\n",
			want: []string{"config.toml:1:8: expected ']' to close table name"},
		},
		{
			name: "integer overflow",
			doc:  "[limits]\nqueue_depth = 99999999999999999999\n",
			want: []string{"config.toml:2:15: limits.queue_depth: decimal number is too large"},
		},
		{
			name: "zero and negative sizes, each at its line",
			doc:  "[limits]\nqueue_depth = 0\nwasm_memory_mib = -64\ncpu_budget_ms_per_sec = -1\n",
			want: []string{
				"config.toml:2:1: limits.queue_depth: must be a positive integer, got 0",
				"config.toml:3:1: limits.wasm_memory_mib: must be a positive integer, got -64",
				"config.toml:4:1: limits.cpu_budget_ms_per_sec: must be 0 (no budget) or a positive integer, got -1",
			},
		},
		{
			name: "dotted key position",
			doc:  "# limits\nlimits.rate_bytes_per_sec = -5\n",
			want: []string{"config.toml:2:1: limits.rate_bytes_per_sec: must be a positive integer, got -5"},
		},
		{
			name: "wasm memory beyond wasm32",
			doc:  "[limits]\n  wasm_memory_mib = 8192\n",
			want: []string{"config.toml:2:3: limits.wasm_memory_mib: must be at most 4096"},
		},
		{
			name: "max message larger than the default route budget and burst",
			doc:  "[limits]\nmax_message_bytes = 8388608\n",
			want: []string{
				"config.toml:2:1: limits.max_message_bytes: route_budget_bytes (4194304) must be at least max_message_bytes (8388608)",
				"config.toml:2:1: limits.max_message_bytes: rate_burst_bytes (2097152) must be at least max_message_bytes (8388608)",
			},
		},
		{
			name: "route budget below max message points at the budget",
			doc:  "[limits]\nmax_message_bytes = 1024\nroute_budget_bytes = 512\n",
			want: []string{"config.toml:3:1: limits.route_budget_bytes: route_budget_bytes (512) must be at least max_message_bytes (1024)"},
		},
		{
			name: "unknown log level in an inline table",
			doc:  "log = { level = \"loud\" }\n",
			want: []string{`config.toml:1:9: log.level: unknown level "loud"; use debug, info, warn or error`},
		},
		{
			name: "allowlist entries, each at its element",
			doc: "[egress]\nallow = [\n  \"127.0.0.1:11434\",\n  \"http://localhost:8080\",\n  \"localhost\",\n" +
				"  \"10.0.0.0/33\",\n  \"host:0\",\n  \"host:http\",\n  \"bad_host:80\",\n  \":80\",\n]\n",
			want: []string{
				`config.toml:4:3: egress.allow[1]: "http://localhost:8080" has a scheme`,
				`config.toml:5:3: egress.allow[2]: egress: allow-local entry "localhost": want ip:port`,
				`config.toml:6:3: egress.allow[3]: egress: allow-local entry "10.0.0.0/33": not a CIDR prefix`,
				`config.toml:7:3: egress.allow[4]: egress: allow-local entry "host:0": port "0" is neither 1-65535 nor *`,
				`config.toml:8:3: egress.allow[5]: egress: allow-local entry "host:http": port "http" is neither 1-65535 nor *`,
				`config.toml:9:3: egress.allow[6]: egress: allow-local entry "bad_host:80": host "bad_host" is not an IP address or localhost`,
				`config.toml:10:3: egress.allow[7]: egress: allow-local entry ":80": host "" is not an IP address or localhost`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.toml")
			writeFile(t, path, tc.doc)
			c, err := Load(path)
			if err == nil {
				t.Fatalf("Load accepted the file: %+v", c)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tc.want) {
				t.Fatalf("got %d problems, want %d:\n%v", len(lines), len(tc.want), err)
			}
			for i, want := range tc.want {
				if !strings.HasPrefix(lines[i], "config: "+filepath.Dir(path)+string(filepath.Separator)) || !strings.Contains(lines[i], want) {
					t.Errorf("problem %d = %q\nwant it to name the file and contain %q", i, lines[i], want)
				}
			}
			var p *Problem
			if !errors.As(err, &p) || p.Line == 0 {
				t.Errorf("error does not carry a positioned *Problem: %#v", err)
			}
		})
	}
}

func TestLoadUnreadableFile(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("Load of a directory: err = %v, want an error naming it", err)
	}
}

func TestSlogLevel(t *testing.T) {
	for _, tc := range []struct {
		level string
		want  slog.Level
	}{
		{"debug", slog.LevelDebug},
		{"info", slog.LevelInfo},
		{"warn", slog.LevelWarn},
		{"error", slog.LevelError},
		{"ERROR", slog.LevelError},
		{"", slog.LevelInfo},
	} {
		c := Default()
		c.Log.Level = tc.level
		if got := c.SlogLevel(); got != tc.want {
			t.Errorf("SlogLevel(%q) = %v, want %v", tc.level, got, tc.want)
		}
	}
}

func TestSchemaListsEveryKey(t *testing.T) {
	want := []string{
		"call_deadline", "egress", "egress.allow", "limits", "limits.cpu_budget_ms_per_sec",
		"limits.max_message_bytes", "limits.queue_depth", "limits.rate_burst_bytes",
		"limits.rate_bytes_per_sec", "limits.route_budget_bytes", "limits.wasm_memory_mib",
		"limits.wasm_pool_size", "log", "log.level", "limits.max_component_bytes", "mcp_handshake_timeout",
		"store_lock_wait", "watchdog_interval",
		"daemon", "daemon.idle_exit",
		"uplink", "uplink.client_queue", "uplink.ingress", "uplink.acts_for", "uplink.max_clients", "uplink.principals",
		"admin", "admin.enabled", "admin.listen",
		"nats", "nats.host_id", "nats.listen", "nats.routes", "nats.cluster_name", "nats.url",
		"nats.cluster_secret_file", "nats.cluster_tls_cert", "nats.cluster_tls_key", "nats.cluster_tls_ca",
		"nats.creds_file", "nats.creds_dir", "nats.tls_ca", "nats.tls_cert", "nats.tls_key",
		"telemetry", "telemetry.tracing", "telemetry.otlp_endpoint", "telemetry.trace_file", "telemetry.metrics",
		"sandbox", "sandbox.mode", "sandbox.read", "sandbox.devices", "approval", "approval.confined_shell",
		"gc", "gc.session_max_age", "health", "health.max_restarts", "health.restart_backoff", "health.max_restart_backoff",
		"hooks", "hooks.allow_workspace", "hooks.timeout_secs", "hooks.pre_tool_use", "hooks.post_tool_use",
		"hooks.user_prompt_submit", "hooks.stop", "hooks.session_start", "mcp", "mcp.sampling",
		"mcp.session_commands", "mcp.session_read",
	}
	for _, k := range want {
		if schema()[k] == "" {
			t.Errorf("schema has no entry for %s", k)
		}
	}
	if len(schema()) != len(want) {
		t.Errorf("schema has %d keys, want %d: %v", len(schema()), len(want), schema())
	}
}

func TestDurationText(t *testing.T) {
	var d Duration
	if err := d.UnmarshalText([]byte("1h30m")); err != nil || d.Duration != 90*time.Minute {
		t.Fatalf("UnmarshalText = %v, %v", d, err)
	}
	b, _ := d.MarshalText()
	if string(b) != "1h30m0s" {
		t.Fatalf("MarshalText = %q", b)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestTelemetryKeys(t *testing.T) {
	home := t.TempDir()
	write := func(body string) error {
		if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(filepath.Join(home, "config.toml"))
		return err
	}
	if err := write("[telemetry]\ntracing = \"otlp\"\notlp_endpoint = \"http://127.0.0.1:4318\"\nmetrics = true\n"); err != nil {
		t.Fatalf("a valid [telemetry] refused: %v", err)
	}
	for name, body := range map[string]string{
		"unknown exporter":   "[telemetry]\ntracing = \"jaeger\"\n",
		"endpoint no scheme": "[telemetry]\ntracing = \"otlp\"\notlp_endpoint = \"localhost:4318\"\n",
		"endpoint ftp":       "[telemetry]\ntracing = \"otlp\"\notlp_endpoint = \"ftp://localhost:4318\"\n",
		"unknown key":        "[telemetry]\nsample = 1\n",
	} {
		if err := write(body); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if d := Default().Telemetry; d.Tracing != TracingOff || d.Metrics {
		t.Fatalf("telemetry is not off by default: %+v", d)
	}
}
