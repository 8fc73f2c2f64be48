package wasm

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/ipc"
)

// Run-loop watchdog (DESIGN §4): a run loop is exempt from the call
// deadline but must wait in the host (ipc_recv, net_accept, net_read) at
// least once every watchdogWindow;
// after watchdogStrikes windows without one it is stopped, and the engine
// fails: the runtime's health monitor restarts the capsule (with its
// backoff and its cap, internal/runtime/health.go), the one place
// restarts are decided.
var (
	watchdogWindow  = 5 * time.Second
	watchdogStrikes = 3
)

// runLoop drives astrid_run on one dedicated instance.
type runLoop struct {
	e      *Engine
	cancel context.CancelFunc
	done   chan struct{}
}

func startRunLoop(e *Engine) *runLoop {
	ctx, cancel := context.WithCancel(context.Background())
	r := &runLoop{e: e, cancel: cancel, done: make(chan struct{})}
	go r.loop(ctx)
	return r
}

func (r *runLoop) stop() {
	r.cancel()
	<-r.done
}

func (r *runLoop) loop(ctx context.Context) {
	defer close(r.done)
	err := r.runOnce(ctx)
	if ctx.Err() != nil {
		return
	}
	if err == nil {
		err = errors.New("astrid_run returned")
	}
	r.e.log.Warn("run loop ended; the engine has failed (the health monitor restarts the capsule)", "err", err)
	r.e.SetHealth(capsule.Failed, fmt.Errorf("run loop ended: %w", err))
}

func (r *runLoop) runOnce(ctx context.Context) error {
	inst, err := r.e.newInstance(ctx)
	if err != nil {
		return err
	}
	defer inst.close()
	call, cctx := r.e.host.Begin(ctx, ipc.DefaultPrincipal)
	defer call.End()
	st := &inst.state
	st.call = call // the run loop's host call is open from the start
	runCtx, stopRun := context.WithCancelCause(cctx)
	defer stopRun(nil)

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		watch(runCtx, st, stopRun)
	}()
	_, err = inst.mod.ExportedFunction(exportRun).Call(runCtx)
	stopRun(nil)
	wg.Wait()
	cause := context.Cause(runCtx)
	if cause == context.Canceled {
		// Ended by stopRun(nil) above (the guest returned): only a cause
		// of the call's own counts.
		cause = context.Cause(cctx)
	}
	if cause != nil && cause != context.Canceled {
		return cause
	}
	return err
}

// watch stops the run loop when it shows no progress.
func watch(ctx context.Context, st *callState, stop context.CancelCauseFunc) {
	t := time.NewTicker(watchdogWindow)
	defer t.Stop()
	last, strikes := st.recvs.Load(), 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if n := st.recvs.Load(); n != last {
			last, strikes = n, 0
			continue
		}
		if strikes++; strikes >= watchdogStrikes {
			stop(fmt.Errorf("run loop made no progress (no ipc_recv, net_accept or net_read) for %d windows of %s", strikes, watchdogWindow))
			return
		}
	}
}
