package request

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// Kernel is what a request needs of the kernel a frontend reaches: in
// process (kernel.Frontend) or through the daemon's socket (daemonclient).
type Kernel interface {
	PublishRequest(from dispatch.Caller, topic string, payload json.RawMessage, req dispatch.Request) (dispatch.Result, error)
	Subscribe(from dispatch.Caller, pattern string, scoped bool) (bus.Subscription, error)
}

// NewID returns prefix followed by 32 random hex digits (128 bits): the one
// generator of the frontends' call, turn, session and correlation ids.
func NewID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// Failed is the kernel's answer to a request no handler answered.
type Failed struct {
	ipc.RequestFailed
}

func (f *Failed) Error() string {
	return fmt.Sprintf("%s (%s)", f.Message, f.Reason)
}

// AsFailed reports whether err is (or wraps) the kernel's failure answer.
func AsFailed(err error) (*Failed, bool) {
	var f *Failed
	ok := errors.As(err, &f)
	return f, ok
}

// Ask sends payload on topic for caller as a request answered on replyTo
// with correlation id corr, and returns the payload (guest form) of the
// first answer on replyTo whose source accept takes (nil: any source but
// the kernel) — the kernel stamps sources, so no other capsule can answer
// in a handler's name — or the kernel's failure for corr as a *Failed
// error. It subscribes before it publishes, so no answer is lost. ctx
// bounds the wait, and its deadline, if any, is the request's (the kernel
// answers FailTimeout when it passes).
func Ask(ctx context.Context, k Kernel, caller dispatch.Caller, topic string, payload json.RawMessage, replyTo, corr string, accept func(source string) bool) ([]byte, error) {
	var timeout time.Duration
	if dl, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(dl), time.Millisecond)
	}
	sub, err := k.Subscribe(caller, replyTo, true)
	if err != nil {
		return nil, fmt.Errorf("request %s: %w", topic, err)
	}
	defer sub.Close()
	if err := Send(k, caller, topic, payload, replyTo, corr, timeout); err != nil {
		return nil, err
	}
	body, err := Await(ctx, sub, corr, func(d bus.Delivery) ([]byte, bool) {
		src := d.Envelope.SourceID
		if src == ipc.KernelSourceID || (accept != nil && !accept(src)) {
			return nil, false // not a handler's answer: someone else's words
		}
		return ipc.GuestBytes(d.Envelope.Payload), true
	})
	switch {
	case err == nil:
		return body, nil
	case errors.As(err, new(*Failed)):
		return nil, fmt.Errorf("request %s: %w", topic, err)
	}
	return nil, fmt.Errorf("request %s: no answer: %w", topic, err)
}

// Send publishes payload on topic for caller as a request answered on
// replyTo and tied by corr, that the kernel answers with a failure when no
// handler has by timeout (zero: dispatch.DefaultRequestTimeout). The
// caller must already listen on replyTo (Await reads it), or the answer
// may come before anyone hears it.
func Send(k Kernel, caller dispatch.Caller, topic string, payload json.RawMessage, replyTo, corr string, timeout time.Duration) error {
	if _, err := k.PublishRequest(caller, topic, payload, dispatch.Request{ReplyTo: replyTo, CorrelationID: corr, Timeout: timeout}); err != nil {
		return fmt.Errorf("request %s: %w", topic, err)
	}
	return nil
}

// Await reads sub, a subscription to a request's reply topic, until the
// request tied by corr is answered, and returns what answer makes of the
// first delivery it takes (ok), or the kernel's failure for corr as a
// *Failed error. The kernel's failures of other requests are skipped
// before answer sees them; answer skips the rest that is not this
// request's answer (another request's, an untrusted source's). It returns
// the subscription's error when ctx ends or the subscription does, so a
// caller that must act on its own give-up (cancel the work) can tell the
// two apart with ctx.Err().
//
// A subscription may outlive one request (a client making calls one after
// another on one route); Await only reads it.
func Await[T any](ctx context.Context, sub bus.Subscription, corr string, answer func(bus.Delivery) (T, bool)) (T, error) {
	for {
		d, err := sub.Recv(ctx)
		if err != nil {
			var zero T
			return zero, err
		}
		if f, ok := KernelFailure(d.Envelope); ok {
			if f.CorrelationID == corr {
				var zero T
				return zero, &Failed{f}
			}
			continue // another request's failure
		}
		if v, ok := answer(d); ok {
			return v, nil
		}
	}
}

// KernelFailure reads e as the kernel's failure answer to a request (any
// request: compare CorrelationID). Only the kernel's own envelope counts,
// as the kernel stamps sources: a capsule repeating a failure's words is
// not the kernel saying so.
func KernelFailure(e *ipc.Envelope) (ipc.RequestFailed, bool) {
	if e.SourceID != ipc.KernelSourceID {
		return ipc.RequestFailed{}, false
	}
	return ipc.AsRequestFailed(ipc.GuestBytes(e.Payload))
}
