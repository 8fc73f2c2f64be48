// Package acp is `astrid acp`: the Agent Client Protocol (JSON-RPC over
// stdio, github.com/coder/acp-go-sdk) as one more frontend of the agent
// (docs/acp.md, docs/agent.md). An editor (Zed, JetBrains, Neovim and
// Emacs plugins) starts one process per connection and talks to it on
// standard input and output.
//
// It owns: the mapping between ACP and a turn of the agent (session/prompt
// drives one agentclient turn; deltas become agent_message_chunk, the
// model's reasoning agent_thought_chunk, tool calls tool_call and
// tool_call_update with a kind, locations and, for edits, a diff; an approval question becomes session/request_permission
// and its answer the person's decision; session/cancel cancels the turn; a
// prompt's images go with its text when the session's model takes them),
// the ACP sessions of one connection (each bound to the editor's cwd as its
// workspace, through the Backend, opened again on the next prompt when the
// daemon behind it restarted; one that brought MCP servers gets a
// workspace of its own, the servers attached to it through the Backend
// and stopped when it is released: mcp.go), session/load replaying a stored session
// (sessionclient), session/set_model from the provider registry
// (registryclient), answering the fs tool's requests for the editor's
// buffers (fs/read_text_file, fs/write_text_file) when the editor offers
// them, and the input guard in front of the SDK's reader: a
// line that is not JSON, not a JSON-RPC message, or longer than maxFrame is
// answered with a JSON-RPC error and skipped, so no input ends the
// connection or the process.
//
// It must not: boot or reach into a kernel or dial the daemon (the Backend
// gives each workspace its kernel: cmd/astrid's in-process scope or daemon
// connection); decide an approval itself (only the editor's answer, or the
// approval layer's timeout, settles one); run a tool or touch a file
// itself (every effect is the agent's, through the router, the approval
// layer and the grants; the old text of a diff is read with the session's
// read_file tool; an editor's buffer is read or written by the editor, for
// the fs tool that checked the path first and asked the turn's session:
// buffers.go); write anything but JSON-RPC on its output.
package acp
