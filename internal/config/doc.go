// Package config owns the operator's side of the runtime: the state
// directory ($ASTRID_HOME, default ~/.astrid) and its config.toml, decoded
// strictly and validated, with every problem reported at file:line:col.
//
// It must not act on the values (the bus, dispatch, engines and egress read
// them from a Config they are handed), must not read capsules' manifests, and
// must not open the state database (internal/store does).
//
// Template is the commented config.toml `astrid init` writes, generated from
// Config and Default (template.go), so it cannot miss a key.
//
// config.toml, with every key at its default:
//
//	call_deadline = "5m"             # per call, Go duration syntax
//	mcp_handshake_timeout = "30s"    # start + initialize of one MCP server;
//	                                 # a command waits for it only when it
//	                                 # needs that server's capsule
//	store_lock_wait = "5s"           # longest wait for state.db while another
//	                                 # astrid process is using it
//	watchdog_interval = "5s"         # how often the agent's phase limits are
//	                                 # checked (astrid.v1.watchdog.tick); "0s": never
//
//	[limits]
//	route_budget_bytes    = 4194304  # per subscription route
//	max_message_bytes     = 1048576  # larger publishes are refused
//	rate_bytes_per_sec    = 10485760 # token bucket per (capsule, principal)
//	rate_burst_bytes      = 2097152
//	queue_depth           = 64       # per (capsule, principal) interceptor queue
//	wasm_pool_size        = 16       # instances per wasm capsule
//	wasm_memory_mib       = 64       # per wasm instance
//	cpu_budget_ms_per_sec = 1000     # guest CPU per principal; 0 = unlimited
//	max_component_bytes   = 67108864 # largest wasm component file; refused
//	                                 # before it is read
//
//	[egress]
//	allow = []                       # local endpoints: "host:port" or a CIDR
//
//	[log]
//	level = "warn"                   # debug | info | warn | error (the
//	                                 # commands print their own results; info
//	                                 # adds the capsules' and the kernel's notes)
//
//	[daemon]
//	idle_exit = "0s"                 # a daemon astrid chat started by itself
//	                                 # exits after this long with no client and
//	                                 # no turn; "0s": never
//
//	[uplink]                         # the daemon's socket, run/astrid.sock
//	max_clients  = 128               # connected at once (1-1000); one more is
//	                                 # answered with an error and closed
//	client_queue = 256               # frames waiting for one client; a client
//	                                 # that lets more pile up is disconnected
//	principals   = []                # "uid=principal" ("1001=alice"): who other
//	                                 # local users act as; the daemon owner's
//	                                 # uid is "default", other uids are refused
//	ingress      = []                # "principal=pattern" ("guest=user.v1.prompt"):
//	                                 # narrows what that principal's clients may
//	                                 # publish; none: the uplink's whole allowlist
//	acts_for     = []                # "capsule=principal" ("chat-bridge=alice",
//	                                 # "chat-bridge=*"): whom an installed uplink
//	                                 # capsule acts for; built-ins act for anyone
//
//	[gc]                             # what astrid gc removes
//	session_max_age = "2160h"        # sessions unwritten this long; "0s": keep all
//
//	[health]                         # restarts of a failed capsule
//	max_restarts        = 5          # then it stays failed; 0: never restart
//	restart_backoff     = "1s"       # before the first; doubling each time
//	max_restart_backoff = "1m"       # at most this long between two
//
//	[telemetry]                      # docs/observability.md; all off by default
//	tracing       = "off"            # off | stdout | otlp: one trace per turn
//	otlp_endpoint = "http://localhost:4318" # OTLP/HTTP collector (/v1/traces)
//	trace_file    = ""               # stdout exporter: append here instead
//	metrics       = false            # the daemon's admin endpoint serves /metrics
//
//	[mcp]                            # what MCP servers may ask of Astrid
//	sampling = []                    # capsules whose servers may sample (asked
//	                                 # like a tool call, run on the active model)
//	session_commands = []            # commands an editor's ACP session may start
//	                                 # as its own MCP servers (e.g. ["npx"])
//	session_read = []                # dirs those servers may read (their code)
package config
