package host

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/ipc"
)

// newRequestID returns a fresh question id in the form of a random UUID
// (version 4), as upstream's request ids are: 122 random bits, and a
// single topic segment.
func newRequestID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:]), nil
}

// frontendQuestion is one question the host asks a person through a
// frontend on behalf of a call.
type frontendQuestion struct {
	op      string
	id      string
	topic   string // where the question goes
	payload []byte
	answers string   // the scoped topic its answers come on
	trusted []string // the source ids whose answers count
	window  time.Duration
	// take reads one trusted answer; it reports whether the question is
	// answered (false: ignored, keep waiting).
	take func(payload []byte) bool
	// asked, if set, runs once the question reached at least one
	// frontend, before the wait.
	asked func()
}

// askFrontend publishes q as the kernel, for the call's principal, and
// waits for the first answer from a trusted frontend that q.take accepts.
// Nobody hearing the question, or no answer within the window, is
// CodeTimeout; the call ending is CodeCancelled (or its deadline
// CodeTimeout).
func (call *Call) askFrontend(b *bus.Bus, q frontendQuestion) error {
	// Subscribed before the question goes out, so no answer is missed;
	// scoped, so only this principal's answers arrive.
	r, err := b.Subscribe(bus.RouteSpec{Owner: ipc.KernelSourceID, Pattern: q.answers, Principal: call.principal, Scoped: true})
	if err != nil {
		return hostapi.Errorf(hostapi.CodeUnavailable, q.op, "%v", err)
	}
	defer r.Close()
	// Asked only if a frontend hears it: another capsule listening on the
	// topic (react pauses its tool clock on approval questions) answers
	// nothing, and the question would wait out its whole window.
	if !call.frontendHears(b, q.topic, q.trusted) {
		return hostapi.Errorf(hostapi.CodeTimeout, q.op, "no frontend is listening for %s's questions", call.principal)
	}
	// The question carries the call's trace: the wait shows in its turn.
	res, err := call.c.deps.Dispatcher.PublishKernelTraced(call.principal, call.caller.Trace, q.topic, q.payload)
	if err != nil {
		return hostapi.Errorf(hostapi.CodeUnavailable, q.op, "question not published: %v", err)
	}
	if res.Routes == 0 {
		return hostapi.Errorf(hostapi.CodeTimeout, q.op, "no frontend is listening for %s's questions", call.principal)
	}
	if q.asked != nil {
		q.asked()
	}
	ctx, cancel := context.WithTimeout(call.ctx, q.window)
	defer cancel()
	for {
		d, err := r.Recv(ctx)
		if err != nil {
			if cerr := call.live(q.op); cerr != nil {
				return cerr
			}
			if errors.Is(err, context.DeadlineExceeded) {
				return hostapi.Errorf(hostapi.CodeTimeout, q.op, "no answer within %s", q.window)
			}
			return hostapi.Errorf(hostapi.CodeClosed, q.op, "%v", err)
		}
		// An uplink relays its connected person's answer under its own
		// id; the route is scoped to the call's principal, so the answer
		// is that person's.
		if !slices.Contains(q.trusted, d.Envelope.SourceID) && !call.c.isUplink(d.Envelope.SourceID) {
			call.c.log.Warn(q.op+": ignored an answer from a source that is not a frontend", "source", d.Envelope.SourceID, "request_id", q.id)
			continue
		}
		if q.take(ipc.GuestBytes(d.Envelope.Payload)) {
			return nil
		}
	}
}

// frontendHears reports whether a trusted frontend or an uplink has a
// route that receives the call's principal's messages on topic.
func (call *Call) frontendHears(b *bus.Bus, topic string, trusted []string) bool {
	for _, r := range b.Resolve(topic).Routes() {
		s := r.Spec()
		if s.Scoped && s.Principal != call.principal {
			continue
		}
		if slices.Contains(trusted, s.Owner) || call.c.isUplink(s.Owner) {
			return true
		}
	}
	return false
}
