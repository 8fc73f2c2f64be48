// Package hostapi is the syscall table: every effect a capsule can have on the
// world, as one Go interface (Host) with its request and result types and its
// error codes.
//
// It is a leaf shared by three parties that must agree on it exactly: the sdk
// (what capsule code calls), internal/host (the one implementation, where the
// gate, egress, store and dispatcher are applied), and the wasm ABI
// (docs/abi.md, one import per method). It holds no state and does no I/O.
//
// Process runs (ProcessRun, foreground only), approval questions
// (RequestApproval) and questions for a value (Elicit) are here; net
// connect/bind and identity calls come with later issues and are absent
// rather than stubbed.
package hostapi
