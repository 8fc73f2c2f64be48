package native

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/sdk"
)

// Engine runs one sdk capsule natively.
type Engine struct {
	code *sdk.Capsule
	host *host.Capsule

	mu     sync.Mutex
	health capsule.Health
}

var _ capsule.Engine = (*Engine)(nil)

// New binds capsule code to its host.
func New(code *sdk.Capsule, h *host.Capsule) *Engine {
	return &Engine{code: code, host: h}
}

// Name implements capsule.Engine.
func (e *Engine) Name() string { return "native" }

// Load implements capsule.Engine; linked code needs no preparation.
func (e *Engine) Load(context.Context) error {
	e.set(capsule.Ready, nil)
	return nil
}

// WaitReady implements capsule.Engine.
func (e *Engine) WaitReady(ctx context.Context) error { return ctx.Err() }

// Unload implements capsule.Engine.
func (e *Engine) Unload(context.Context) error {
	e.set(capsule.Unloaded, nil)
	return nil
}

// Health implements capsule.Engine.
func (e *Engine) Health() capsule.Health {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.health
}

func (e *Engine) set(s capsule.State, err error) {
	e.mu.Lock()
	e.health = capsule.Health{State: s, Err: err}
	e.mu.Unlock()
}

// Invoke implements capsule.Engine. The handler runs on its own goroutine so
// that a deadline or a cancel key answers the caller at once, with the call's
// failure reply, even if the handler is stuck in computation.
func (e *Engine) Invoke(ctx context.Context, inv hostapi.Invocation) (hostapi.Verdict, error) {
	if !e.code.HasHandler(inv.Handler) {
		return hostapi.Verdict{}, capsule.ErrNotSupported
	}
	call, cctx := e.host.Begin(ctx, inv.Principal)
	defer call.End()

	type outcome struct {
		v   hostapi.Verdict
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		defer func() {
			if r := recover(); r != nil {
				o = outcome{err: fmt.Errorf("handler %s panicked: %v\n%s", inv.Handler, r, debug.Stack())}
			}
			done <- o
		}()
		o.v, o.err = e.code.Invoke(call, inv)
	}()

	select {
	case o := <-done:
		if o.err != nil {
			call.Fail(o.err)
		}
		return o.v, o.err
	case <-cctx.Done():
		err := context.Cause(cctx)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("handler %s: deadline exceeded", inv.Handler)
		} else {
			err = fmt.Errorf("handler %s: cancelled: %w", inv.Handler, err)
		}
		call.Fail(err)
		return hostapi.Verdict{}, err
	}
}
