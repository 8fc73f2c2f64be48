// Package wasm is the engine that runs a capsule's wasm components, each a
// core WebAssembly module speaking docs/abi.md, on wazero: one component,
// or several loaded in order, libraries called through the host
// (components.go).
//
// It owns: the shared Runtime (wazero config, the on-disk compilation
// cache, compiled modules shared by hash), integrity checks of component
// files, merging a module's data segments before compiling (Go's linker
// emits tens of thousands, each costing every instance), the per-capsule instance pool, the `astrid` host module that maps
// each import onto the capsule's internal/host Call, the optional run loop
// and its watchdog, and the limits on a guest (deadline, cancellation,
// memory, capped sleeps, a WASI with real clocks and crypto/rand but no
// files, environment or sockets).
//
// It must not make capability decisions: every import goes through
// internal/host, which applies the gate, egress and dispatcher exactly as
// for a native capsule. It must not trust the guest: every pointer and
// length is bounds-checked, and an instance that trapped is never reused.
package wasm
