package config

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// keyNotes explains each key of config.toml in the file `astrid init`
// writes. Every key of Config must have one (a test holds it), so a new key
// cannot reach the template unexplained.
var keyNotes = map[string]string{
	"call_deadline":                "longest a capsule call may run (Go duration syntax)",
	"mcp_handshake_timeout":        "start + initialize of one MCP server; a command waits for it only when it needs that server's capsule",
	"store_lock_wait":              "longest wait for state.db while another astrid process is using it",
	"watchdog_interval":            `how often the agent's phase limits are checked (astrid.v1.watchdog.tick); "0s": never`,
	"limits":                       "the kernel's resource limits",
	"limits.route_budget_bytes":    "bytes queued per subscription route before the heaviest principal's oldest are evicted",
	"limits.max_message_bytes":     "larger publishes are refused",
	"limits.rate_bytes_per_sec":    "publish token bucket per (capsule, principal)",
	"limits.rate_burst_bytes":      "the bucket's burst",
	"limits.queue_depth":           "per (capsule, principal) interceptor queue; answers to requests already made get 16x; full: dropped, counted, answered where the kernel can",
	"limits.wasm_pool_size":        "instances per wasm capsule",
	"limits.wasm_memory_mib":       "memory per wasm instance",
	"limits.cpu_budget_ms_per_sec": "guest CPU per principal per second; 0: unlimited",
	"limits.max_component_bytes":   "largest wasm component file; refused before it is read",
	"egress":                       "the SSRF guard's exceptions",
	"egress.allow":                 `local endpoints capsules may reach: "host:port" or a CIDR (a local model server)`,
	"log":                          "the runtime's log",
	"log.level":                    "debug | info | warn | error (info adds the capsules' and the kernel's notes)",
	"daemon":                       "the daemon (astrid daemon / start / stop)",
	"daemon.idle_exit":             `a daemon astrid chat started by itself exits after this long with no client connected and no turn running; "0s": never (one started with astrid start or astrid daemon never does)`,
	"uplink":                       "the daemon's socket ($ASTRID_HOME/run/astrid.sock) and who may use it",
	"uplink.max_clients":           "clients connected at once; one more is answered with an error and closed",
	"uplink.client_queue":          "frames waiting for one client; a client that lets more pile up is disconnected",
	"nats":                         "one bus across hosts (docs/nats.md); with none of listen, routes and url set the bus stays on this host",
	"nats.host_id":                 "this host's name on the bus, unique in the cluster; empty: a random one at each start",
	"nats.listen":                  `host:port the embedded NATS server accepts its cluster peers' routes on ("0.0.0.0:6222"); beyond loopback it needs cluster_secret_file or cluster TLS`,
	"nats.routes":                  `the peers' route addresses, "nats-route://host:port" each`,
	"nats.cluster_name":            "the embedded servers' cluster name; the same on every host",
	"nats.cluster_secret_file":     "file (mode 0600) holding the secret every embedded node presents on its routes, the same on every host (openssl rand -hex 32); a node listening beyond loopback needs it or cluster TLS",
	"nats.cluster_tls_cert":        "this node's certificate for TLS on the routes between embedded nodes (with cluster_tls_key and cluster_tls_ca)",
	"nats.cluster_tls_key":         "that certificate's key",
	"nats.cluster_tls_ca":          "CA that signed every node's route certificate; a peer presenting another is refused",
	"nats.url":                     "an existing NATS cluster to join instead of embedding a server (nats://host:4222 or tls://...)",
	"nats.creds_file":              "that cluster's credentials file (with creds_dir: the host's own, from astrid nats creds --host-only)",
	"nats.creds_dir":               "directory of per-capsule credentials, <capsule id>.creds (mode 0600), minted by the operator with astrid nats creds; each capsule connects with its own, so the cluster enforces its grants",
	"nats.tls_ca":                  "CA file that cluster's certificate is checked against",
	"nats.tls_cert":                "client certificate for that cluster (with tls_key)",
	"nats.tls_key":                 "the client certificate's key",
	"sandbox":                      "how the processes capsules start are confined (docs/sandbox.md); astrid sandbox check says what this machine enforces",
	"sandbox.mode":                 `"enforce": each process runs inside its capsule's grants (Landlock + seccomp), and is not started where the kernel cannot enforce them; "off": unconfined, warned about at every start`,
	"sandbox.read":                 "what every confined process may read besides its grants (programs, libraries, certificates); never $ASTRID_HOME",
	"sandbox.devices":              "device files every confined process may read and write",
	"approval":                     "what runs without asking the person",
	"mcp":                          "what MCP servers may ask of Astrid",
	"mcp.sampling":                 "capsules whose MCP servers may ask for sampling (sampling/createMessage): it runs on the principal's active model once the person approves it; every other capsule's request is refused; the same list lets a capsule's tools ask the model of the client of astrid mcp serve",
	"mcp.session_commands":         "commands an editor's ACP session may start as its own MCP servers (bare names on PATH or absolute paths); each call of their tools is still asked about; empty: none",
	"mcp.session_read":             "directories those servers may read besides the session's workspace (their own code), absolute",
	"approval.confined_shell":      `"ask": every shell command is asked about; "auto": a command that runs confined (sandbox enforced) runs without a question; running outside the sandbox is always asked`,
	"telemetry":                    "traces and metrics (docs/observability.md); all off by default",
	"telemetry.tracing":            `trace exporter: "off" | "stdout" (JSON spans) | "otlp" (OTLP over HTTP); one trace per agent turn`,
	"telemetry.otlp_endpoint":      "the OTLP/HTTP collector's base URL (traces go to its /v1/traces); http:// is sent without TLS",
	"telemetry.trace_file":         `for tracing = "stdout": a file to append the spans to instead of standard output (relative to $ASTRID_HOME)`,
	"telemetry.metrics":            "the daemon's loopback admin endpoint serves Prometheus metrics at /metrics",
	"uplink.principals":            `peer uid → principal, "uid=principal" each ("1001=alice"); the daemon owner's uid is "default", any other uid not listed is refused`,
	"admin":                        "the daemon's admin HTTP server: the web view (`astrid ui` prints its URL) and what is mounted beside it",
	"admin.enabled":                "start it with the daemon; it answers only requests with this run's token (in $ASTRID_HOME/run, 0600)",
	"admin.listen":                 `loopback "host:port" only (127.0.0.1, ::1 or localhost; anything else is refused); port 0: a free one each run`,
	"gc":                           "what astrid gc removes (it removes nothing by itself; --dry-run lists it)",
	"gc.session_max_age":           `a session nobody wrote to for this long is deleted by astrid gc (--older-than overrides); "0s": keep every session`,
	"health":                       "restarts of a capsule that failed (load, a crashed server, a trapped run loop)",
	"health.max_restarts":          "restarts a failed capsule gets before the monitor gives up on it (a reload or reinstall starts it afresh); 0: never restart",
	"health.restart_backoff":       "wait before the first restart; each further one waits twice as long",
	"health.max_restart_backoff":   "the longest wait between two restarts",
	"hooks":                        "command hooks (Claude Code's protocol: JSON on stdin and stdout, exit 2 blocks with stderr as the reason), run confined by astrid-capsule-hooks (docs/hooks.md); each event is an array of tables, [[hooks.pre_tool_use]] with command, matcher and timeout_secs",
	"hooks.allow_workspace":        "also run the hooks of the workspace's .astrid/hooks.json (a cloned repository's programs: off unless you trust every workspace)",
	"hooks.timeout_secs":           "seconds a hook may run when it names no timeout_secs (0: 60); a PreToolUse hook past it refuses the call, any other is skipped",
	"hooks.pre_tool_use":           "before a tool call: may allow, deny with a reason the model reads, or change the arguments (matcher: a regular expression over the tool's name)",
	"hooks.post_tool_use":          "after a tool call, before the model reads its result: additionalContext or a block's reason is given to the model after it (matcher as for pre_tool_use)",
	"hooks.user_prompt_submit":     "when a prompt is sent: may add context for the model or block the prompt",
	"hooks.stop":                   "when a turn has ended (not one cancelled or refused as busy); told, not asked",
	"hooks.session_start":          "at a session's first prompt in this process: may add context for the model",
	"uplink.ingress":               `what one principal's clients may publish, "principal=pattern" each ("guest=user.v1.prompt"); a principal with none may publish everything the uplink allows`,
	"uplink.acts_for":              `which principals an installed uplink capsule may act for, "capsule=principal" each ("chat-bridge=alice", "chat-bridge=*"); built-in uplinks act for anyone, an installed one listed nowhere for no one`,
}

// Template is the config.toml `astrid init` writes: every key at its
// default, commented out, each with what it does. Uncommented as is, it
// decodes to Default().
func Template() []byte {
	var b strings.Builder
	b.WriteString("# Astrid's operator configuration ($ASTRID_HOME/config.toml).\n")
	b.WriteString("# Every key is shown at its default, commented out: uncomment a line to change it.\n")
	b.WriteString("# The file is decoded strictly: an unknown key or a wrong type is an error naming\n")
	b.WriteString("# file:line:col, so a typo never goes unnoticed.\n")
	v := reflect.ValueOf(Default())
	t := v.Type()
	// Top-level keys first (TOML puts them before any table), then each
	// table.
	for pass := range 2 {
		for i := range t.NumField() {
			f, fv := t.Field(i), v.Field(i)
			name := tomlName(f)
			if name == "" {
				continue
			}
			table := f.Type.Kind() == reflect.Struct && f.Type != durationType
			if table != (pass == 1) {
				continue
			}
			if !table {
				writeKey(&b, name, name, fv)
				continue
			}
			fmt.Fprintf(&b, "\n# %s\n# [%s]\n", keyNotes[name], name)
			for j := range f.Type.NumField() {
				sf := f.Type.Field(j)
				if sub := tomlName(sf); sub != "" {
					writeKey(&b, sub, name+"."+sub, fv.Field(j))
				}
			}
		}
	}
	return []byte(b.String())
}

func tomlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	if name == "-" {
		return ""
	}
	return name
}

// writeKey writes one commented key with its note above it.
func writeKey(b *strings.Builder, name, dotted string, v reflect.Value) {
	fmt.Fprintf(b, "\n# %s\n# %s = %s\n", keyNotes[dotted], name, tomlValue(v))
}

// tomlValue spells a default in TOML.
func tomlValue(v reflect.Value) string {
	if v.Type() == durationType {
		return strconv.Quote(shortDuration(v.Interface().(Duration).Duration))
	}
	switch v.Kind() {
	case reflect.Int:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.String:
		return strconv.Quote(v.String())
	case reflect.Slice:
		items := make([]string, v.Len())
		for i := range items {
			items[i] = tomlValue(v.Index(i))
		}
		return "[" + strings.Join(items, ", ") + "]"
	}
	return fmt.Sprint(v.Interface())
}

// shortDuration writes 5m rather than 5m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
