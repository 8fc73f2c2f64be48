// Package sessionmcp turns the MCP servers a frontend's session brings (an
// editor's mcpServers on ACP session/new and session/load) into the
// manifest of one capsule the kernel loads bound to that session's request
// scope (kernel.AttachMCP; the MCP engine's Options.Bound keeps its tools
// to that scope).
//
// It owns the checks of that untrusted list against the operator's rules
// (config.toml [mcp] session_commands and session_read): a server's name
// (it prefixes its tools' names), a stdio server's command (one the
// operator lists, resolved on PATH here and never inside the workspace),
// arguments and environment (no loader or interpreter injection, nothing
// astrid sets itself), an HTTP server's URL (an address the egress guard
// would refuse is refused here, by name) and headers; and the grants the
// capsule gets: the workspace (`*`) read and write, the operator's
// session_read directories read, the commands as host_process, the URLs'
// hosts as net.
//
// It must not start, dial or load anything (the kernel and the MCP engine
// do), and must not widen a grant beyond what the rules and the list say.
package sessionmcp
