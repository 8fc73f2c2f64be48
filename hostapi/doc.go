// Package hostapi is the syscall table: every effect a capsule can have on the
// world, as one Go interface (Host) with its request and result types and its
// error codes.
//
// It is a leaf shared by three parties that must agree on it exactly: the sdk
// (what capsule code calls), internal/host (the one implementation, where the
// gate, egress, store and dispatcher are applied), and the wasm ABI
// (docs/abi.md, one import per method). It holds no state and does no I/O.
//
// Process runs (ProcessRun in the foreground; ProcessSpawn, ProcessLogs
// and ProcessKill in the background), approval questions
// (RequestApproval), questions for a value (Elicit), raw sockets (Net) and
// the identity map (Identity) are here.
package hostapi
