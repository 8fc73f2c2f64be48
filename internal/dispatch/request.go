package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/astrid-go/astrid/ipc"
)

// Request/reply (DESIGN §4b). A request names its reply address and a
// correlation id; the dispatcher keeps it pending until something answers it
// — a reply on that address with that id, for that principal — and answers
// it itself, with an ipc.RequestFailed, when nothing will: no handler took
// it, a handler's queue was full or its capsule unloaded, the handler failed
// or refused it, or its deadline passed. It never needs to know what a
// topic means to do so.

// Request is what makes a publish a request.
type Request struct {
	// ReplyTo is the topic the answer goes to. The requester must be
	// allowed to subscribe to it or publish on it: the kernel's failure
	// answer lands only where the requester itself may listen or speak
	// (the approval layer passes a call on as the caller's request, whose
	// answer it may publish but not hear).
	ReplyTo string
	// CorrelationID ties the answers to the request (ipc.ValidateCorrelationID).
	CorrelationID string
	// Timeout is how long the request waits for an answer; zero is
	// DefaultRequestTimeout, more than MaxRequestTimeout is cut to it.
	Timeout time.Duration
}

const (
	// DefaultRequestTimeout is a request's wait when it names none: long
	// enough for a tool call that waits on a person's approval.
	DefaultRequestTimeout = 10 * time.Minute
	// MaxRequestTimeout bounds any request's wait: a day, an agent turn's
	// outer bound.
	MaxRequestTimeout = 24 * time.Hour
	// MaxPendingRequests bounds the requests one capsule may have waiting
	// at once; past it a request is refused at publish (ErrTooManyRequests).
	MaxPendingRequests = 4096
	// maxLostReplies bounds the correlation ids a capsule remembers having
	// been told it lost an answer of.
	maxLostReplies = 256
)

// ErrTooManyRequests refuses a request past MaxPendingRequests.
var ErrTooManyRequests = errors.New("too many requests waiting for an answer")

type requestKey struct {
	principal, replyTo, correlation string
}

type pendingRequest struct {
	key requestKey
	// requester is the capsule the request counts against (the latest to
	// send it); askers every capsule that sent it (a capsule relaying a
	// request, as the approval capsule does, sends it again): the reply is
	// delivered to them alone. first holds the usual single asker.
	requester string
	first     [1]string
	askers    []string
	expires   time.Time // the request's deadline
	timer     *time.Timer
	// prev and next link the request, once answered, into requests'
	// list of answered requests (a stream's later replies still go to
	// its askers until its deadline), the least recently answered first.
	prev, next *pendingRequest
}

// MaxAnsweredRequests bounds the answered requests whose later replies
// are still addressed. Past it the one that went longest without a reply
// is forgotten (a finished tool call before a live stream, whose every
// event renews it), and a reply to it reaches no capsule (counted:
// Stats.RepliesUnaddressed).
const MaxAnsweredRequests = 4096

// asked is what the kernel needs of a request to answer it: a copy, since
// the envelope itself is still being stamped when it becomes pending.
type asked struct {
	key   requestKey
	topic string
	scope uint64
}

func askedOf(e *ipc.Envelope) asked {
	return asked{key: keyOf(e), topic: e.Topic, scope: e.Scope}
}

// requests is the dispatcher's table of requests waiting for an answer.
type requests struct {
	mu       sync.Mutex
	pending  map[requestKey]*pendingRequest
	byCap    map[string]int
	closed   bool
	lostSeen map[string][]string // capsule id → correlation ids told lost, oldest first
	// answered holds the requests answered once, until their deadline,
	// linked from oldest (least recently answered) to newest.
	answered       map[requestKey]*pendingRequest
	oldest, newest *pendingRequest
}

// link appends p to the answered list as its newest.
//
// rq.mu must be held.
func (rq *requests) link(p *pendingRequest) {
	p.prev, p.next = rq.newest, nil
	if rq.newest != nil {
		rq.newest.next = p
	} else {
		rq.oldest = p
	}
	rq.newest = p
}

// unlink removes p from the answered list.
//
// rq.mu must be held.
func (rq *requests) unlink(p *pendingRequest) {
	if p.prev != nil {
		p.prev.next = p.next
	} else {
		rq.oldest = p.next
	}
	if p.next != nil {
		p.next.prev = p.prev
	} else {
		rq.newest = p.prev
	}
	p.prev, p.next = nil, nil
}

// forget removes the answered request p.
//
// rq.mu must be held.
func (rq *requests) forget(p *pendingRequest) {
	rq.unlink(p)
	delete(rq.answered, p.key)
}

func keyOf(e *ipc.Envelope) requestKey {
	return requestKey{principal: e.Principal, replyTo: e.ReplyTo(), correlation: e.CorrelationID()}
}

// add registers a as pending for requester for wait.
func (rq *requests) add(requester string, a asked, wait time.Duration, expire func(asked)) error {
	rq.mu.Lock()
	defer rq.mu.Unlock()
	if rq.closed {
		return ErrClosed
	}
	if rq.pending == nil {
		rq.pending, rq.byCap = map[requestKey]*pendingRequest{}, map[string]int{}
	}
	if rq.byCap[requester] >= MaxPendingRequests {
		return fmt.Errorf("%w: capsule %s has %d", ErrTooManyRequests, requester, MaxPendingRequests)
	}
	k := a.key
	p := &pendingRequest{key: k, requester: requester, expires: time.Now().Add(wait)}
	p.first[0] = requester
	p.askers = p.first[:]
	if old, ok := rq.answered[k]; ok { // a new request of that key: its own askers
		rq.forget(old)
	}
	if old, ok := rq.pending[k]; ok {
		// The same request again (a retry, or a relay's): the new one's
		// deadline holds, and whoever asked before still gets the reply.
		old.timer.Stop()
		rq.byCap[old.requester]--
		for _, a := range old.askers {
			if !slices.Contains(p.askers, a) {
				p.askers = append(p.askers, a)
			}
		}
	}
	p.timer = time.AfterFunc(wait, func() { expire(a) })
	rq.pending[k] = p
	rq.byCap[requester]++
	return nil
}

// take removes the request k if it is still pending, reporting whether it
// was and who asked it (the capsules its reply is delivered to).
func (rq *requests) take(k requestKey) (askers []string, ok bool) {
	rq.mu.Lock()
	defer rq.mu.Unlock()
	p, ok := rq.pending[k]
	if !ok {
		return nil, false
	}
	p.timer.Stop()
	delete(rq.pending, k)
	if rq.byCap[p.requester]--; rq.byCap[p.requester] <= 0 {
		delete(rq.byCap, p.requester)
	}
	return p.askers, true
}

// addressees returns who a reply to k goes to: the askers of the request
// it answers, which the first reply takes from pending (reporting first)
// and which stay addressed, for the replies after it, until the request's
// deadline. None when no request of this host is waiting or streaming.
func (rq *requests) addressees(k requestKey) (askers []string, first bool) {
	rq.mu.Lock()
	defer rq.mu.Unlock()
	now := time.Now()
	if p, ok := rq.pending[k]; ok {
		p.timer.Stop()
		delete(rq.pending, k)
		if rq.byCap[p.requester]--; rq.byCap[p.requester] <= 0 {
			delete(rq.byCap, p.requester)
		}
		rq.remember(p, now)
		return p.askers, true
	}
	a, ok := rq.answered[k]
	if !ok {
		return nil, false
	}
	if now.After(a.expires) {
		rq.forget(a)
		return nil, false
	}
	rq.unlink(a)
	rq.link(a)
	return a.askers, false
}

// remember keeps p, just answered, addressed: forgetting the expired
// requests at the front and, past MaxAnsweredRequests, the least recently
// answered.
//
// rq.mu must be held.
func (rq *requests) remember(p *pendingRequest, now time.Time) {
	if rq.closed {
		return
	}
	if rq.answered == nil {
		rq.answered = map[requestKey]*pendingRequest{}
	}
	for old := rq.oldest; old != nil; old = rq.oldest {
		if len(rq.answered) < MaxAnsweredRequests && now.Before(old.expires) {
			break
		}
		rq.forget(old)
	}
	rq.answered[p.key] = p
	rq.link(p)
}

// firstLoss reports whether capsule was not yet told it lost an answer for
// correlation, and remembers that it now is.
func (rq *requests) firstLoss(capsule, correlation string) bool {
	rq.mu.Lock()
	defer rq.mu.Unlock()
	if rq.lostSeen == nil {
		rq.lostSeen = map[string][]string{}
	}
	seen := rq.lostSeen[capsule]
	for _, id := range seen {
		if id == correlation {
			return false
		}
	}
	if len(seen) == maxLostReplies {
		seen = seen[1:]
	}
	rq.lostSeen[capsule] = append(seen, correlation)
	return true
}

// close stops every timer: nobody is left to hear an answer.
func (rq *requests) close() {
	rq.mu.Lock()
	defer rq.mu.Unlock()
	rq.closed = true
	for k, p := range rq.pending {
		p.timer.Stop()
		delete(rq.pending, k)
	}
	rq.byCap = nil
	rq.answered, rq.oldest, rq.newest = nil, nil, nil
}

// Pending is the number of requests waiting for an answer.
func (d *Dispatcher) Pending() int {
	d.requests.mu.Lock()
	defer d.requests.mu.Unlock()
	return len(d.requests.pending)
}

// publishRequest publishes payload on topic as a request (RequestOf: an
// Event's checks, then the request's): the reply address must be a valid topic the capsule
// may subscribe to or publish on, and the correlation id valid. From then on the request
// is answered exactly once by the kernel if no handler answers it: at once
// when nothing on this host or a transport took it (ipc.FailNoResponders),
// and otherwise as the Request type says.
func (d *Dispatcher) publishRequest(from Caller, e *ipc.Envelope, req Request) (Result, error) {
	topic := e.Topic
	c, err := d.lookup(from.Capsule)
	if err != nil {
		return Result{}, fmt.Errorf("dispatch: request %s from capsule %s: %w", topic, from.Capsule, err)
	}
	if err := ipc.ValidateTopic(req.ReplyTo); err != nil {
		d.stats.invalid.Add(1)
		return Result{}, fmt.Errorf("dispatch: request %s from capsule %s: reply address: %w", topic, c.id, err)
	}
	if err := ipc.ValidateCorrelationID(req.CorrelationID); err != nil {
		d.stats.invalid.Add(1)
		return Result{}, fmt.Errorf("dispatch: request %s from capsule %s: %w", topic, c.id, err)
	}
	if !c.subscribe.allows(req.ReplyTo) && !c.publish.allows(req.ReplyTo) {
		d.stats.subscribeDenied.Add(1)
		return Result{}, fmt.Errorf("dispatch: request %s from capsule %s: reply address %s: %w", topic, c.id, req.ReplyTo, c.subscribe.deny("subscribe", req.ReplyTo, c.id))
	}
	wait := req.Timeout
	if wait <= 0 {
		wait = DefaultRequestTimeout
	}
	wait = min(wait, MaxRequestTimeout)
	e.SourceID, e.Principal, e.Scope = c.id, from.Principal, from.Scope
	e.SetRequest(req.ReplyTo, req.CorrelationID, time.Now().Add(wait).UnixNano())
	// Pending before it is published: a handler may answer before the
	// publish returns.
	a := askedOf(e)
	if err := d.requests.add(c.id, a, wait, func(a asked) {
		d.fail(a, ipc.FailTimeout, fmt.Sprintf("nothing answered within %s", wait))
	}); err != nil {
		return Result{}, fmt.Errorf("dispatch: request %s from capsule %s: %w", topic, c.id, err)
	}
	res, err := d.publishChecked(from, e, false)
	if err != nil {
		d.requests.take(a.key)
		return Result{}, err
	}
	if res.Routes == 0 && res.Interceptors == 0 && d.opts.Transport == nil {
		d.fail(a, ipc.FailNoResponders, fmt.Sprintf("nothing on the bus takes %s", topic))
	}
	return res, nil
}

// publishReply publishes payload on topic as an answer to the request
// correlationID names (ReplyOf); the first answer ends that request's wait. A reply
// a handler publishes may use the queues' headroom (limitFor).
func (d *Dispatcher) publishReply(from Caller, e *ipc.Envelope, correlationID string) (Result, error) {
	if err := ipc.ValidateCorrelationID(correlationID); err != nil {
		d.stats.invalid.Add(1)
		return Result{}, fmt.Errorf("dispatch: reply on %s from capsule %s: %w", e.Topic, from.Capsule, err)
	}
	e.SourceID, e.Principal, e.Scope = from.Capsule, from.Principal, from.Scope
	e.SetReply(correlationID)
	return d.publishChecked(from, e, false)
}

// keyOfReply is the key of the request the reply e answers.
func keyOfReply(e *ipc.Envelope) requestKey {
	return requestKey{principal: e.Principal, replyTo: e.Topic, correlation: e.CorrelationID()}
}

// peek returns who a reply to k would go to (addressees), changing
// nothing.
func (rq *requests) peek(k requestKey) []string {
	rq.mu.Lock()
	defer rq.mu.Unlock()
	if p, ok := rq.pending[k]; ok {
		return p.askers
	}
	if a, ok := rq.answered[k]; ok && time.Now().Before(a.expires) {
		return a.askers
	}
	return nil
}

// answered ends the wait of the request e (a reply) answers, if any, and
// returns the capsules that asked it: the only ones e is delivered to
// (none when no request of this host waits for it).
func (d *Dispatcher) answered(e *ipc.Envelope) []string {
	askers, _ := d.requests.addressees(keyOfReply(e))
	if len(askers) == 0 {
		d.stats.repliesUnaddressed.Add(1)
	}
	return askers
}

// failRequest answers the request e with a failure from the kernel, if it
// is still waiting (a handler's answer or an earlier failure ends the
// wait). The answer goes to e's reply address, for e's principal and
// scope, with the headroom answers get. It reports whether it answered.
func (d *Dispatcher) failRequest(e *ipc.Envelope, reason ipc.FailureReason, msg string) bool {
	return d.fail(askedOf(e), reason, msg)
}

// FailRequest answers the request e with a failure from the kernel if it
// is still waiting on this host, as the dispatcher does for a request it
// dropped: for a transport that lost the host a request went to
// (ipc.FailHostLost). It reports whether it answered; false for an
// envelope that is no request or whose wait already ended.
func (d *Dispatcher) FailRequest(e *ipc.Envelope, reason ipc.FailureReason, msg string) bool {
	if !e.IsRequest() {
		return false
	}
	return d.failRequest(e, reason, msg)
}

func (d *Dispatcher) fail(a asked, reason ipc.FailureReason, msg string) bool {
	askers, ok := d.requests.take(a.key)
	if !ok {
		return false
	}
	payload, err := ipc.RequestFailed{CorrelationID: a.key.correlation, Reason: reason, Message: msg}.MarshalJSON()
	if err != nil {
		return false
	}
	ans := &ipc.Envelope{Topic: a.key.replyTo, Payload: payload, SourceID: ipc.KernelSourceID, Principal: a.key.principal, Scope: a.scope}
	ans.SetReply(a.key.correlation)
	if _, err := d.deliverReply(nil, ans, askers, nil, 0, true); err != nil {
		d.log.Warn("dispatch: the failure answer to a request was not delivered", slog.String("topic", a.topic), slog.String("reply_to", a.key.replyTo), slog.Any("error", err))
		return false
	}
	d.stats.requestsFailed.Add(1)
	d.log.Debug("dispatch: request answered by the kernel", slog.String("topic", a.topic), slog.String("reply_to", a.key.replyTo), slog.String("reason", string(reason)), slog.String("message", msg))
	return true
}

// dropped answers for an interceptor call that will never run: a request
// is failed on its reply address; a reply lost at its requester's queue is
// replaced, for that capsule alone and past its full queue, by a failure
// naming its correlation id (once per id), so that the requester stops
// waiting at once. It reports whether someone was told.
func (d *Dispatcher) dropped(c *capsule, l *link, e *ipc.Envelope, reason ipc.FailureReason, msg string) bool {
	switch {
	case e.IsRequest():
		return d.failRequest(e, reason, msg)
	case e.IsReply():
		if !d.requests.firstLoss(c.id, e.CorrelationID()) {
			return false
		}
		payload, err := ipc.RequestFailed{CorrelationID: e.CorrelationID(), Reason: ipc.FailReplyLost,
			Message: fmt.Sprintf("an answer on %s was lost before capsule %s took it: %s; the answer is incomplete (for bursts of one principal's work, raise [limits] queue_depth)", e.Topic, c.id, msg)}.MarshalJSON()
		if err != nil {
			return false
		}
		ans := &ipc.Envelope{Topic: e.Topic, Payload: payload, SourceID: ipc.KernelSourceID, Principal: e.Principal, Scope: e.Scope, Timestamp: time.Now().UnixNano()}
		ans.SetReply(e.CorrelationID())
		return d.Notify(c.id, l.pattern, l.handler, ans)
	}
	return false
}

// requestKey in a context: the request an interceptor call serves, so that
// the host layer can answer it (RequestFrom).
type requestCtxKey struct{}

func withRequest(ctx context.Context, e *ipc.Envelope) context.Context {
	if !e.IsRequest() {
		return ctx
	}
	return context.WithValue(ctx, requestCtxKey{}, e)
}

// WithRequest is the context of an interceptor call serving the request e,
// as the dispatcher makes it: for an engine's or a test's own calls.
func WithRequest(ctx context.Context, e *ipc.Envelope) context.Context {
	return withRequest(ctx, e)
}

// RequestFrom returns the reply address and correlation id of the request
// an interceptor call serves; empty when the event is no request.
func RequestFrom(ctx context.Context) (replyTo, correlationID string) {
	e, _ := ctx.Value(requestCtxKey{}).(*ipc.Envelope)
	if e == nil {
		return "", ""
	}
	return e.ReplyTo(), e.CorrelationID()
}
