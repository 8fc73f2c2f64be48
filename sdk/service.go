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

// Serve sets the capsule's service. Only the native engine runs services
// today; a wasm capsule's service is not started (see docs/rationale/daemon.md,
// "Why does only the native engine run an sdk service?"). Setting a second
// one panics: it is a programming error found by the capsule's first test.
func (c *Capsule) Serve(s Service) {
	if c.service != nil {
		panic("sdk: a capsule has at most one service")
	}
	c.service = s
}

// Service returns the capsule's service, nil when it has none. It is what
// engines call.
func (c *Capsule) Service() Service { return c.service }
