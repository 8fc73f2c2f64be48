package ask

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// Asker is the host call a question is asked for: whose question it is,
// where it goes, and when waiting for its answer ends. The host fills it
// from its Call; nothing here trusts a capsule for any of it.
type Asker struct {
	// Bus is where answers are heard; Dispatcher publishes the question
	// as the kernel.
	Bus        *bus.Bus
	Dispatcher *dispatch.Dispatcher
	// Capsule is the asking capsule's id, Principal the call's.
	Capsule   string
	Principal string
	// Trace is the call's trace context: the wait shows in its turn.
	Trace ipc.TraceContext
	// CallID is the tool call the question holds up (the call's cancel
	// key), "" outside one.
	CallID string
	// Ctx is the call's context: its end ends the wait.
	Ctx context.Context
	// Ended is the call's error for op once Ctx has ended (cancelled, its
	// deadline passed), nil while it runs.
	Ended func(op string) error
	// Uplink reports whether the capsule id holds the uplink grant: an
	// uplink relays its connected person's answers under its own id.
	Uplink func(id string) bool
	Log    *slog.Logger
}

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

// question is one question asked of a person through a frontend on
// behalf of a call.
type question struct {
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

// ask publishes q as the kernel, for the call's principal, and waits for
// the first answer from a trusted frontend that q.take accepts. Nobody
// hearing the question, or no answer within the window, is CodeTimeout;
// the call ending is CodeCancelled (or its deadline CodeTimeout).
func (s Asker) ask(q question) error {
	b := s.Bus
	// Subscribed before the question goes out, so no answer is missed;
	// scoped, so only this principal's answers arrive.
	r, err := b.Subscribe(bus.RouteSpec{Owner: ipc.KernelSourceID, Pattern: q.answers, Principal: s.Principal, Scoped: true})
	if err != nil {
		return hostapi.Errorf(hostapi.CodeUnavailable, q.op, "%v", err)
	}
	defer r.Close()
	// Asked only if a frontend hears it: another capsule listening on the
	// topic (react pauses its tool clock on approval questions) answers
	// nothing, and the question would wait out its whole window.
	if !s.frontendHears(q.topic, q.trusted) {
		return hostapi.Errorf(hostapi.CodeTimeout, q.op, "no frontend is listening for %s's questions", s.Principal)
	}
	// The question carries the call's trace: the wait shows in its turn.
	res, err := s.Dispatcher.Publish(dispatch.Caller{Principal: s.Principal, Trace: s.Trace}, q.topic, q.payload, dispatch.KernelEvent)
	if err != nil {
		return hostapi.Errorf(hostapi.CodeUnavailable, q.op, "question not published: %v", err)
	}
	if res.Routes == 0 {
		return hostapi.Errorf(hostapi.CodeTimeout, q.op, "no frontend is listening for %s's questions", s.Principal)
	}
	if q.asked != nil {
		q.asked()
	}
	ctx, cancel := context.WithTimeout(s.Ctx, q.window)
	defer cancel()
	for {
		d, err := r.Recv(ctx)
		if err != nil {
			if cerr := s.Ended(q.op); cerr != nil {
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
		if !slices.Contains(q.trusted, d.Envelope.SourceID) && !s.uplink(d.Envelope.SourceID) {
			s.Log.Warn(q.op+": ignored an answer from a source that is not a frontend", "source", d.Envelope.SourceID, "request_id", q.id)
			continue
		}
		if q.take(ipc.GuestBytes(d.Envelope.Payload)) {
			return nil
		}
	}
}

// frontendHears reports whether a trusted frontend or an uplink has a
// route that receives the call's principal's messages on topic.
func (s Asker) frontendHears(topic string, trusted []string) bool {
	for _, r := range s.Bus.Resolve(topic).Routes() {
		spec := r.Spec()
		if spec.Scoped && spec.Principal != s.Principal {
			continue
		}
		if slices.Contains(trusted, spec.Owner) || s.uplink(spec.Owner) {
			return true
		}
	}
	return false
}

// uplink reports whether source id holds the uplink grant.
func (s Asker) uplink(id string) bool { return s.Uplink != nil && s.Uplink(id) }
