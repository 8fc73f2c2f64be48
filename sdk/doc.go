// Package sdk is what capsule authors import. A capsule is a value built with
// New: named handlers bound to [subscribe] patterns in its Capsule.toml, and
// tools, which the sdk turns into seed 000's whole convention (the
// interceptor on tool.v1.execute.<name>, the describe answer, the result on
// tool.v1.execute.<name>.result, is_error results, a failure reply and a
// cancel key for every call). Resources and Prompts serve the resource and
// prompt conventions (`astrid mcp serve`'s MCP resources and prompts) the
// same way.
//
// The contract (DESIGN §4) is the same natively and in wasm: handlers are
// synchronous and reach the host only through the *Call they are given; no
// package-level state, no goroutines, channels or timers; durable state lives
// in KV (keys starting with '~' are volatile instead: in the kernel's memory
// only, gone when it stops; see hostapi.KV). The sdk imports only hostapi and ipc, and builds for
// GOOS=wasip1 GOARCH=wasm.
package sdk
