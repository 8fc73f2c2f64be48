// Package runloop is a capsule with a run loop (docs/abi.md §6), for the
// wasm engine's watchdog tests. Loaded under a capsule id containing
// "stuck" its loop never calls ipc_recv (no progress); under any other id
// it receives in a tight loop (progress). It is built only for
// GOOS=wasip1 (testdata is outside ./...).
package runloop

import "github.com/astrid-go/astrid/sdk"

// New returns the capsule: one no-op handler besides the run loop.
func New() *sdk.Capsule {
	c := sdk.New("a run loop for the watchdog tests")
	c.Handle("runloop.v1.noop", "noop", func(*sdk.Call) error { return nil })
	return c
}
