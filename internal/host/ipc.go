package host

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// maxSubscriptionsPerCall bounds what one call can hold open.
const maxSubscriptionsPerCall = 128

// Publish implements hostapi.IPC.
func (call *Call) Publish(topic string, payload []byte) error {
	defer call.leave(call.enter(opPublish))
	if err := call.live("publish"); err != nil {
		return err
	}
	payload, err := call.c.manifest.StampPublish(call.c.id, topic, payload)
	if err != nil {
		call.c.log.Warn("publish not stamped by the manifest", "topic", topic, "err", err)
	}
	// The dispatcher checks the payload (JSON, UTF-8) once for every
	// publisher; an invalid one comes back as CodeInvalid. A publish on
	// the reply address of the request the call serves is its reply:
	// a handler answers a request the way it always has, and the wait
	// ends (DESIGN §4b).
	if call.correlation != "" && topic == call.replyTo {
		_, err = call.c.deps.Dispatcher.Publish(call.caller, topic, payload, dispatch.ReplyOf(call.correlation))
	} else {
		_, err = call.c.deps.Dispatcher.Publish(call.caller, topic, payload)
	}
	if err != nil {
		if errors.Is(err, bus.ErrTooLarge) {
			call.tooLarge(topic, len(payload))
		}
		return hostapi.Errorf(codeOfDispatch(err), "publish", "%v", err)
	}
	// The call answered where its failure reply would have: no safety net
	// is needed any more.
	call.mu.Lock()
	if call.failure.topic == topic {
		call.failure = failureReply{}
	}
	call.mu.Unlock()
	return nil
}

// PublishRequest implements hostapi.IPC.
func (call *Call) PublishRequest(topic string, payload []byte, req hostapi.Request) error {
	defer call.leave(call.enter(opPublishRequest))
	if err := call.live("publish_request"); err != nil {
		return err
	}
	r := dispatch.Request{ReplyTo: req.ReplyTo, CorrelationID: req.CorrelationID, Timeout: req.Timeout}
	if _, err := call.c.deps.Dispatcher.Publish(call.caller, topic, payload, dispatch.RequestOf(r)); err != nil {
		return hostapi.Errorf(codeOfDispatch(err), "publish_request", "%v", err)
	}
	return nil
}

// PublishReply implements hostapi.IPC.
func (call *Call) PublishReply(topic, correlationID string, payload []byte) error {
	defer call.leave(call.enter(opPublishReply))
	if err := call.live("publish_reply"); err != nil {
		return err
	}
	if _, err := call.c.deps.Dispatcher.Publish(call.caller, topic, payload, dispatch.ReplyOf(correlationID)); err != nil {
		if errors.Is(err, bus.ErrTooLarge) {
			call.tooLarge(topic, len(payload))
		}
		return hostapi.Errorf(codeOfDispatch(err), "publish_reply", "%v", err)
	}
	call.mu.Lock()
	if call.failure.topic == topic {
		call.failure = failureReply{}
	}
	call.mu.Unlock()
	return nil
}

// tooLarge answers the request the call serves when its answer, on topic,
// was refused as over the bus's message cap: the caller is told so, not
// that the capsule "trapped" (issue 15.8).
func (call *Call) tooLarge(topic string, size int) {
	if topic != call.replyTo {
		return
	}
	if call.failServed(ipc.FailTooLarge, fmt.Sprintf("it is %d bytes, over the largest message the bus carries; ask for less (a range of lines, a narrower pattern)", size)) {
		call.mu.Lock()
		call.dropFailureOn(topic)
		call.mu.Unlock()
	}
}

// Serving implements hostapi.IPC.
func (call *Call) Serving() (replyTo, correlationID string) {
	defer call.leave(call.enter(opServing))
	return call.replyTo, call.correlation
}

// Subscribe implements hostapi.IPC; the subscription is scoped to the
// invoking principal and closed when the call ends.
func (call *Call) Subscribe(pattern string) (hostapi.SubscriptionID, error) {
	defer call.leave(call.enter(opSubscribe))
	if err := call.live("subscribe"); err != nil {
		return 0, err
	}
	call.mu.Lock()
	n := len(call.subs)
	call.mu.Unlock()
	if n >= maxSubscriptionsPerCall {
		return 0, hostapi.Errorf(hostapi.CodeTooLarge, "subscribe", "a call may hold at most %d subscriptions", maxSubscriptionsPerCall)
	}
	r, err := call.c.deps.Dispatcher.Subscribe(call.caller, pattern, true)
	if err != nil {
		return 0, hostapi.Errorf(codeOfDispatch(err), "subscribe", "%v", err)
	}
	return call.keep("subscribe", r)
}

func (call *Call) route(op string, sub hostapi.SubscriptionID) (*bus.Route, error) {
	call.mu.Lock()
	defer call.mu.Unlock()
	r, ok := call.subs[sub]
	if !ok {
		return nil, hostapi.Errorf(hostapi.CodeNotFound, op, "no subscription %d", sub)
	}
	return r, nil
}

// Recv implements hostapi.IPC.
func (call *Call) Recv(sub hostapi.SubscriptionID, timeout time.Duration) (hostapi.Message, error) {
	defer call.leave(call.enter(opRecv))
	r, err := call.route("recv", sub)
	if err != nil {
		return hostapi.Message{}, err
	}
	if timeout <= 0 || timeout > hostapi.MaxRecvTimeout {
		timeout = hostapi.MaxRecvTimeout
	}
	ctx, cancel := context.WithTimeout(call.ctx, timeout)
	defer cancel()
	d, err := r.Recv(ctx)
	switch {
	case err == nil:
		return message(d), nil
	case errors.Is(err, context.DeadlineExceeded) && call.ctx.Err() == nil:
		return hostapi.Message{}, hostapi.Errorf(hostapi.CodeTimeout, "recv", "nothing received within %s", timeout)
	case errors.Is(err, bus.ErrClosed):
		return hostapi.Message{}, hostapi.Errorf(hostapi.CodeClosed, "recv", "subscription %d is closed", sub)
	default:
		if lerr := call.live("recv"); lerr != nil {
			return hostapi.Message{}, lerr
		}
		return hostapi.Message{}, hostapi.Errorf(hostapi.CodeInternal, "recv", "%v", err)
	}
}

// Poll implements hostapi.IPC.
func (call *Call) Poll(sub hostapi.SubscriptionID) (hostapi.Message, bool, error) {
	defer call.leave(call.enter(opPoll))
	r, err := call.route("poll", sub)
	if err != nil {
		return hostapi.Message{}, false, err
	}
	d, ok := r.TryRecv()
	if !ok {
		return hostapi.Message{}, false, nil
	}
	return message(d), true, nil
}

// Unsubscribe implements hostapi.IPC.
func (call *Call) Unsubscribe(sub hostapi.SubscriptionID) error {
	defer call.leave(call.enter(opUnsubscribe))
	call.mu.Lock()
	r, ok := call.subs[sub]
	delete(call.subs, sub)
	call.mu.Unlock()
	if !ok {
		return hostapi.Errorf(hostapi.CodeNotFound, "unsubscribe", "no subscription %d", sub)
	}
	r.Close()
	return nil
}

// Interceptors implements hostapi.IPC.
func (call *Call) Interceptors(topic string) ([]string, error) {
	defer call.leave(call.enter(opInterceptors))
	if err := ipc.ValidateTopic(topic); err != nil {
		return nil, hostapi.Errorf(hostapi.CodeInvalid, "interceptors", "%v", err)
	}
	return call.c.deps.Dispatcher.Interceptors(topic), nil
}

// ExactInterceptors implements hostapi.IPC.
func (call *Call) ExactInterceptors(topic string) ([]string, error) {
	defer call.leave(call.enter(opExactInterceptors))
	if err := ipc.ValidateTopic(topic); err != nil {
		return nil, hostapi.Errorf(hostapi.CodeInvalid, "exact_interceptors", "%v", err)
	}
	return call.c.deps.Dispatcher.ExactInterceptors(topic), nil
}

func message(d bus.Delivery) hostapi.Message {
	e := d.Envelope
	return hostapi.Message{
		Topic:     e.Topic,
		Payload:   ipc.GuestBytes(e.Payload),
		SourceID:  e.SourceID,
		Principal: e.Principal,
		Host:      e.Host(),
		Lost:      d.Lost,
	}
}

func codeOfDispatch(err error) hostapi.Code {
	switch {
	case errors.Is(err, dispatch.ErrDenied):
		return hostapi.CodeDenied
	case errors.Is(err, dispatch.ErrRateLimited), errors.Is(err, dispatch.ErrNotAdmitted), errors.Is(err, dispatch.ErrTooManyRequests):
		return hostapi.CodeRateLimited
	case errors.Is(err, bus.ErrTooLarge):
		return hostapi.CodeTooLarge
	case errors.Is(err, ipc.ErrInvalidTopic), errors.Is(err, dispatch.ErrInvalidPrincipal), errors.Is(err, dispatch.ErrInvalidPayload), errors.Is(err, ipc.ErrInvalidCorrelationID):
		return hostapi.CodeInvalid
	case errors.Is(err, bus.ErrClosed), errors.Is(err, dispatch.ErrClosed):
		return hostapi.CodeClosed
	}
	return hostapi.CodeInternal
}
