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
// first answer on replyTo whose source accept takes (nil: any source) —
// the kernel stamps sources, so no other capsule can answer in a handler's
// name — or the kernel's failure for corr as a *Failed error. It
// subscribes before it publishes, so no answer is lost. ctx bounds the
// wait, and its deadline, if any, is the request's (the kernel answers
// FailTimeout when it passes).
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
	if _, err := k.PublishRequest(caller, topic, payload, dispatch.Request{ReplyTo: replyTo, CorrelationID: corr, Timeout: timeout}); err != nil {
		return nil, fmt.Errorf("request %s: %w", topic, err)
	}
	for {
		d, err := sub.Recv(ctx)
		if err != nil {
			return nil, fmt.Errorf("request %s: no answer: %w", topic, err)
		}
		body := ipc.GuestBytes(d.Envelope.Payload)
		if d.Envelope.SourceID == ipc.KernelSourceID {
			if f, ok := ipc.AsRequestFailed(body); ok && f.CorrelationID == corr {
				return nil, fmt.Errorf("request %s: %w", topic, &Failed{f})
			}
			continue
		}
		if accept != nil && !accept(d.Envelope.SourceID) {
			continue // not a handler's answer: someone else's words
		}
		return body, nil
	}
}
