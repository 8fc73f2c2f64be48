// Package mcpserve is `astrid mcp serve` (DESIGN §12): the tools,
// resources and prompts the loaded capsules provide, served to an outside
// MCP client over the go-sdk's server (stdio, or streamable HTTP behind a
// bearer token).
//
// It owns the translation between MCP and the tool convention: the tool
// list (the describe protocol's answers, re-read on each tools/list, names
// with ':' spelled '.', readOnlyHint and destructiveHint from the mutable
// flag), a call (through internal/toolclient, so the router, the approval
// capsule and the providers' confinement apply as to any other call), an
// approval question turned into an MCP elicitation (a yes/no/always form,
// or a multi round-trip input request on protocol 2026-07-28) or, for a
// client that cannot elicit, a refusal, a capsule's elicit question the same
// way (never a secret), a result's typed parts as MCP image, audio and
// embedded-resource content, a tool's progress and log messages as
// notifications/progress and notifications/message, cancellation, and the
// HTTP handler's token check.
// And the translation between MCP and the resource and prompt conventions
// (ipc/resource.go, ipc/prompt.go; docs/mcp.md): their describe fan-outs,
// a read or get asked of the owning capsule by request/reply, a capsule's
// declared skills, context files and slash commands (its static engine's
// answers) served the same way, the checks of a client's URI and prompt
// arguments before any capsule sees them, subscriptions relayed only
// from the owning capsule's updates, and completions from declared values.
//
// It must not boot, wire or reach into a kernel (it is handed a
// toolclient.Kernel: the daemon's or an in-process one), decide an approval
// itself, or let a call bypass the router: every call is a
// tool.v1.request.execute request like an agent's. It must not read a
// resource itself (a host path, a file): the owning capsule reads it.
package mcpserve
