package native

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/astrid-go/astrid/internal/capsule"
)

// service is a running sdk service (sdk.Capsule.Serve).
type service struct {
	stop context.CancelFunc
	done chan struct{}
}

// Start implements capsule.Starter: the capsule's service, if it has one,
// runs on its own goroutine under a host call of the system principal that
// has no deadline, until Unload.
func (e *Engine) Start() {
	run := e.code.Service()
	if run == nil {
		return
	}
	e.svcMu.Lock()
	defer e.svcMu.Unlock()
	if e.svc != nil {
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	call, cctx := e.host.Begin(ctx, "")
	s := &service{stop: stop, done: make(chan struct{})}
	e.svc = s
	go func() {
		defer close(s.done)
		defer call.End()
		defer func() {
			if r := recover(); r != nil {
				e.host.Logger().Error("service panicked", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			}
		}()
		err := run(cctx, call)
		switch {
		case cctx.Err() != nil:
			e.host.Logger().Debug("service stopped", "err", err)
		case err != nil:
			// Shown as the capsule's state (capsule list, status): a
			// daemon whose uplink could not bind must say why.
			e.host.Logger().Error("service ended", "err", err)
			e.SetHealth(capsule.Failed, fmt.Errorf("service: %w", err))
		default:
			e.host.Logger().Warn("service returned while its capsule is loaded")
		}
	}()
}

// stopService cancels the service and waits for it, at most until ctx ends.
func (e *Engine) stopService(ctx context.Context) error {
	e.svcMu.Lock()
	s := e.svc
	e.svc = nil
	e.svcMu.Unlock()
	if s == nil {
		return nil
	}
	s.stop()
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("service still running at unload: %w", errors.Join(ctx.Err()))
	}
}
