// Package mcpserve is `astrid mcp serve` (DESIGN §12): the tools the loaded
// capsules provide, served to an outside MCP client over the go-sdk's
// server (stdio, or streamable HTTP behind a bearer token).
//
// It owns the translation between MCP and the tool convention: the tool
// list (the describe protocol's answers, re-read on each tools/list, names
// with ':' spelled '.', readOnlyHint and destructiveHint from the mutable
// flag), a call (through internal/toolclient, so the router, the approval
// capsule and the providers' confinement apply as to any other call), an
// approval question turned into an MCP elicitation (a yes/no/always form,
// or a multi round-trip input request on protocol 2026-07-28) or, for a
// client that cannot elicit, a refusal, a capsule's elicit question the same
// way (never a secret), cancellation, and the HTTP handler's token check.
//
// It must not boot, wire or reach into a kernel (it is handed a
// toolclient.Kernel: the daemon's or an in-process one), decide an approval
// itself, or let a call bypass the router: every call is a
// tool.v1.request.execute request like an agent's.
package mcpserve
