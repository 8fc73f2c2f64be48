// Package capsulebuild builds a Go capsule package to a wasm module for the
// wasm engine (docs/abi.md): it generates the main shim that hands the
// package's New() to sdk.Serve, builds with GOOS=wasip1 GOARCH=wasm
// -buildmode=c-shared, CGO_ENABLED=0 and the caller's GOFLAGS cleared, and
// writes meta.json with the module's sha256.
//
// The shim is never written into the capsule's directory: it is laid over
// the package tree with `go build -overlay`. A capsule in another module is
// built against this checkout's sdk through a generated go.work that uses
// both modules (see docs/abi.md §9).
//
// It must not load or run what it builds; that is the wasm engine's job.
package capsulebuild
