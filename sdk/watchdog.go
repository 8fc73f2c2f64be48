//go:build !wasip1

package sdk

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrStalled is the cause of a Watch context that ended because it was not
// fed in time.
var ErrStalled = errors.New("no progress")

// Watchdog ends its context when it is not fed for its idle period. A
// native capsule that drives a streaming library feeds it on every byte
// read, so a connection that stalls ends the call's request instead of
// hanging until the call's deadline.
//
// It exists here, in the native-only part of the sdk, because capsule
// code starts no timers (DESIGN §4): the kernel's Recv bounds a wait on
// the bus, but nothing else can interrupt a blocked read.
type Watchdog struct {
	timer *time.Timer
	idle  time.Duration
	stop  context.CancelCauseFunc
}

// Watch returns a context that ends with the call, or, with a cause
// wrapping ErrStalled, once idle passes without Feed. Stop releases it.
func (c *Call) Watch(idle time.Duration) (context.Context, *Watchdog) {
	return NewWatch(c.Context(), idle)
}

// NewWatch is Watch under parent, for code that holds a context rather
// than the call.
func NewWatch(parent context.Context, idle time.Duration) (context.Context, *Watchdog) {
	ctx, cancel := context.WithCancelCause(parent)
	w := &Watchdog{idle: idle, stop: cancel}
	w.timer = time.AfterFunc(idle, func() {
		cancel(fmt.Errorf("%w for %s", ErrStalled, idle))
	})
	return ctx, w
}

// Feed restarts the idle period.
func (w *Watchdog) Feed() { w.timer.Reset(w.idle) }

// Stop ends the watch and its context.
func (w *Watchdog) Stop() {
	w.timer.Stop()
	w.stop(context.Canceled)
}
