package sdk

import (
	"context"

	"github.com/astrid-go/astrid/hostapi"
)

// Service is a capsule's long-running entry (a listener that serves
// connections, DESIGN §8): it runs for as long as the capsule is loaded and
// returns when ctx ends (the capsule unloading). Its host belongs to no
// handler call: it acts for the system principal, has no deadline, and is
// safe for concurrent use by the goroutines the service starts (native
// engine). A service that returns early is logged and not restarted.
type Service func(ctx context.Context, h hostapi.Host) error

// Serve sets the capsule's service. The native engine runs it on a
// goroutine of its own; a wasm capsule runs it as its run loop when it
// imports sdk/wasmrun (docs/abi.md §6; docs/rationale/daemon.md, "Why is the
// uplink a native service capsule, and how does a wasm capsule serve?").
// Setting a second one panics: it is a programming error found by the
// capsule's first test.
func (c *Capsule) Serve(s Service) {
	if c.service != nil {
		panic("sdk: a capsule has at most one service")
	}
	c.service = s
}

// Service returns the capsule's service, nil when it has none. It is what
// engines call.
func (c *Capsule) Service() Service { return c.service }
