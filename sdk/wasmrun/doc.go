// Package wasmrun gives a wasm capsule built with the sdk a run loop
// (docs/abi.md §6) that runs its service (sdk.Capsule.Serve): imported for
// its side effect,
//
//	import _ "github.com/astrid-go/astrid/sdk/wasmrun"
//
// it exports astrid_run from the guest, so the host starts the service on
// an instance of its own once the capsule is loaded. It is a separate
// package because the export is what makes the host dedicate that
// instance: a capsule without a service must not export it. In a native
// build it is empty (the native engine runs services itself).
//
// It must not hold state or do anything but call into the sdk.
package wasmrun
