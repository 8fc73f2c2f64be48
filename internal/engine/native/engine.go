package native

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/clock"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/sdk"
)

// Engine runs one sdk capsule natively.
type Engine struct {
	code *sdk.Capsule
	host *host.Capsule

	svcMu sync.Mutex
	svc   *service // the running sdk service, if any (service.go)

	capsule.HealthCell
}

var (
	_ capsule.Engine  = (*Engine)(nil)
	_ capsule.Starter = (*Engine)(nil)
)

// New binds capsule code to its host.
func New(code *sdk.Capsule, h *host.Capsule) *Engine {
	return &Engine{code: code, host: h}
}

// Name implements capsule.Engine.
func (e *Engine) Name() string { return "native" }

// Load implements capsule.Engine; linked code needs no preparation.
func (e *Engine) Load(context.Context) error {
	e.SetHealth(capsule.Ready, nil)
	return nil
}

// WaitReady implements capsule.Engine.
func (e *Engine) WaitReady(ctx context.Context) error { return ctx.Err() }

// Unload implements capsule.Engine; it stops the capsule's service.
func (e *Engine) Unload(ctx context.Context) error {
	err := e.stopService(ctx)
	e.SetHealth(capsule.Unloaded, err)
	return err
}

// Invoke implements capsule.Engine. The handler runs on the caller's
// goroutine (the dispatcher's queue worker), so a call costs no extra hand-off.
// If the call's deadline passes or its cancel key is named while the handler
// is still running, the failure reply is published at that moment, Invoke's
// caller still waits for the handler to return, and every host call the
// handler makes from then on fails.
func (e *Engine) Invoke(ctx context.Context, inv hostapi.Invocation) (v hostapi.Verdict, err error) {
	if !e.code.HasHandler(inv.Handler) {
		return hostapi.Verdict{}, capsule.ErrNotSupported
	}
	// The call is charged to the principal's CPU budget, never refused by
	// it: the dispatcher refuses work when it starts (dispatch.Options.Admit),
	// and refusing a call that continues it could lose an answer.
	ledger := e.host.Ledger()
	start := clock.Process.UnixNano()
	call, cctx := e.host.Begin(ctx, inv.Principal)
	// The failure reply goes out once: from the watch if the call is
	// cancelled while the handler runs (then Stop reports false), else
	// from the deferred check when the handler failed.
	watched := make(chan struct{})
	stopWatch := context.AfterFunc(cctx, func() {
		defer close(watched)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			call.Fail(fmt.Errorf("handler %s: deadline exceeded", inv.Handler))
			return
		}
		call.Fail(fmt.Errorf("handler %s: cancelled: %w", inv.Handler, context.Cause(cctx)))
	})
	defer func() {
		if r := recover(); r != nil {
			v, err = hostapi.Verdict{}, fmt.Errorf("handler %s panicked: %v\n%s", inv.Handler, r, debug.Stack())
		}
		stopped := stopWatch()
		if !stopped {
			// The watch fired: let its failure reply and log line finish
			// before the call ends, so nothing of the call outlives it (an
			// unloading kernel waits for Invoke, not for the watch).
			<-watched
		}
		if err != nil && stopped {
			call.Fail(err)
		}
		if !stopped && err == nil {
			// The deadline or a cancel fired while the handler ran: the
			// caller has its failure reply; report the call as failed.
			err = fmt.Errorf("handler %s: %w", inv.Handler, context.Cause(cctx))
		}
		if ledger != nil {
			// Guest time: the wall time minus what the handler spent
			// waiting inside host calls, as for wasm (DESIGN §4).
			end := clock.Process.UnixNano()
			ledger.ChargeAt(inv.Principal, time.Duration(end-start)-call.Waited(), end)
		}
		call.End()
	}()
	return e.code.Invoke(call, inv)
}
