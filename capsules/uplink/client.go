package uplink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/uplinkwire"
	"github.com/astrid-go/astrid/ipc"
)

// client is one connected frontend: its request reader (run, or a
// takeover of it) and one pump per subscription, each writing its own
// frames through out.
type client struct {
	srv       *server
	h         hostapi.Host
	stream    hostapi.NetHandle
	principal string
	owner     bool        // the peer's uid is the daemon owner's (Query.Owner)
	uid       int         // the peer's uid (SO_PEERCRED), for its workspace
	ingress   []string    // what it may publish (Settings.Ingress)
	traffic   *traffic    // its principal's socket counters
	in        frameReader // used by the one goroutine reading requests

	// busy counts its requests being answered and active is when a frame
	// last went either way (unix ns): an idle client may give up its slot
	// at a full table (admit.go).
	busy   atomic.Int32
	active atomic.Int64

	// out is the outbound side: whoever produces a frame for the client
	// (an answer, an event) writes it, or queues it behind the write in
	// progress; a full queue disconnects the client.
	out  outbox
	done chan struct{} // closed once the client is going away
	stop sync.Once

	// readingEnded is closed when reading requests has ended for good
	// (not handed to a takeover).
	readingEnded chan struct{}

	mu   sync.Mutex
	subs map[uint64]hostapi.SubscriptionID // wire sub → host subscription
	// scope is the request scope its publishes carry (0: none, a client
	// that named no workspace and no settings); scopes are all it opened,
	// closed when it leaves (scope.go).
	scope   uint64
	env     map[string]map[string]string
	scopes  []uint64
	nextSub uint64

	wg sync.WaitGroup // the pumps and the takeovers
}

func newClient(srv *server, stream hostapi.NetHandle, principal string) *client {
	return &client{
		srv: srv, h: srv.h, stream: stream, principal: principal, in: frameReader{n: srv.h, stream: stream},
		out:  outbox{n: srv.h, stream: stream, limit: srv.s.ClientQueue},
		done: make(chan struct{}), readingEnded: make(chan struct{}),
		subs: map[uint64]hostapi.SubscriptionID{},
	}
}

// readWait bounds one wait for a request; an idle client is fine, the
// reader simply waits again.
const readWait = 30 * time.Second

// run serves the client until it leaves, breaks the protocol beyond
// repair, falls behind, or the capsule unloads.
func (c *client) run(ctx context.Context) {
	defer c.teardown()
	if !c.handshake() {
		return
	}
	c.serveRequests(ctx)
	<-c.readingEnded
}

// serveRequests reads and answers requests until the client is done
// with, then closes readingEnded; or, when an answer's write stalls, it
// returns early, leaving the reading to the takeover the answer started.
func (c *client) serveRequests(ctx context.Context) {
	for ctx.Err() == nil {
		more, handedOver := c.serveRequest(ctx)
		if handedOver {
			return
		}
		if !more {
			break
		}
	}
	close(c.readingEnded)
}

// serveRequest reads one request and answers it: more is false once the
// client is done with (it left, broke the protocol beyond repair, or was
// dropped); handedOver is true when the answer's write stalled and a
// takeover now reads the requests.
func (c *client) serveRequest(ctx context.Context) (more, handedOver bool) {
	body, err := c.in.next(readWait)
	switch {
	case err == nil:
	case errors.Is(err, errMidFrame):
		// Cut by time (not by the peer leaving or the unload): say so.
		if code := hostapi.CodeOf(err); code == hostapi.CodeTimeout || code == hostapi.CodeInternal {
			c.fatal(uplinkwire.Errorf(0, uplinkwire.CodeBadFrame, "a frame started and did not finish within %s", frameWait))
		}
		return false, false
	case hostapi.CodeOf(err) == hostapi.CodeTimeout:
		return !c.gone(), false
	case hostapi.CodeOf(err) == hostapi.CodeTooLarge:
		c.fatal(uplinkwire.Errorf(0, uplinkwire.CodeTooLarge, "%v", err))
		return false, false
	default:
		return false, false // closed, reset, cancelled
	}
	c.traffic.add(4+len(body), 0)
	c.touch()
	c.busy.Add(1)
	defer func() {
		c.touch()
		c.busy.Add(-1)
	}()
	takeover := func() {
		defer c.wg.Done()
		c.serveRequests(ctx)
	}
	f, err := uplinkwire.Decode(body)
	if err != nil {
		// The frame was whole, so the stream is still in step: answer
		// and go on.
		return true, c.send(uplinkwire.Errorf(0, uplinkwire.CodeBadFrame, "%v", err), takeover)
	}
	reply, after := c.handle(f)
	handedOver = c.send(reply, takeover)
	if after != nil {
		// After the answer is written or queued: a subscription's
		// first event must not reach the client before its id does.
		after()
	}
	return true, handedOver
}

// handshake reads the hello and answers welcome, or an error and false.
func (c *client) handshake() bool {
	body, err := c.in.next(c.srv.s.HandshakeTimeout)
	if err != nil {
		if hostapi.CodeOf(err) == hostapi.CodeTooLarge && !errors.Is(err, errMidFrame) {
			c.fatal(uplinkwire.Errorf(0, uplinkwire.CodeTooLarge, "%v", err))
		}
		return false
	}
	f, err := uplinkwire.Decode(body)
	switch {
	case err != nil:
		c.fatal(uplinkwire.Errorf(0, uplinkwire.CodeHandshake, "the first frame must be a hello: %v", err))
		return false
	case f.Op != uplinkwire.OpHello:
		c.fatal(uplinkwire.Errorf(0, uplinkwire.CodeHandshake, "the first frame must be a hello, not %q", f.Op))
		return false
	case f.Version != uplinkwire.Version:
		c.fatal(uplinkwire.Errorf(0, uplinkwire.CodeVersion, "protocol version %d is not supported: this daemon speaks version %d", f.Version, uplinkwire.Version))
		return false
	}
	if f.Principal != "" && f.Principal != c.principal {
		if !c.srv.s.mayActAs(c.uid, f.Principal) {
			c.h.Log(hostapi.LogWarn, fmt.Sprintf("uplink: refused client %q of uid %d asking to act as %q ([uplink] principals)", f.Client, c.uid, f.Principal))
			c.fatal(uplinkwire.Errorf(0, uplinkwire.CodePrincipal, "the daemon serves you as principal %q, not %q (config.toml [uplink] principals lets uid %d act as: %s)",
				c.principal, f.Principal, c.uid, strings.Join(c.srv.s.actsAs(c.uid), ", ")))
			return false
		}
		c.traffic.connected(-1)
		c.principal = f.Principal
		c.ingress = c.srv.s.ingressOf(c.principal)
		c.traffic = c.srv.trafficOf(c.principal)
		c.traffic.connected(1)
	}
	ws, failed := c.openScope(f)
	if failed != nil {
		c.fatal(*failed)
		return false
	}
	c.h.Log(hostapi.LogInfo, fmt.Sprintf("uplink: client %q connected as %s", f.Client, c.principal))
	return c.write(uplinkwire.Frame{Op: uplinkwire.OpWelcome, Version: uplinkwire.Version, Principal: c.principal, Workspace: ws})
}

// handle answers one request; after, if not nil, runs once the answer is
// queued.
func (c *client) handle(f uplinkwire.Frame) (reply uplinkwire.Frame, after func()) {
	ok := uplinkwire.Frame{Op: uplinkwire.OpOK, ID: f.ID}
	switch f.Op {
	case uplinkwire.OpPublish:
		if !c.mayPublish(f.Topic) {
			return uplinkwire.Errorf(f.ID, uplinkwire.CodeNotAllowed, "clients may not publish on %q", f.Topic), nil
		}
		payload := []byte(f.Payload)
		if len(payload) == 0 {
			payload = []byte("{}")
		}
		var err error
		if f.CorrelationID != "" {
			if !allowed(egress, f.ReplyTo) {
				return uplinkwire.Errorf(f.ID, uplinkwire.CodeNotAllowed, "clients may not be answered on %q", f.ReplyTo), nil
			}
			err = c.srv.up.RequestIn(c.principal, c.currentScope(), f.Topic, payload,
				hostapi.Request{ReplyTo: f.ReplyTo, CorrelationID: f.CorrelationID, Timeout: time.Duration(f.TimeoutMS) * time.Millisecond})
		} else {
			err = c.srv.up.PublishIn(c.principal, c.currentScope(), f.Topic, payload)
		}
		if err != nil {
			code := uplinkwire.CodeFailed
			if hostapi.CodeOf(err) == hostapi.CodeRateLimited {
				code = uplinkwire.CodeBusy // the principal's CPU budget or rate: later, it may pass
			}
			return uplinkwire.Errorf(f.ID, code, "%v", err), nil
		}
		return ok, nil
	case uplinkwire.OpSubscribe:
		if !allowed(egress, f.Pattern) {
			return uplinkwire.Errorf(f.ID, uplinkwire.CodeNotAllowed, "clients may not subscribe to %q", f.Pattern), nil
		}
		if err := uplinkwire.CheckMatch(f.Match); err != nil {
			return uplinkwire.Errorf(f.ID, uplinkwire.CodeBadFrame, "subscribe: %v", err), nil
		}
		sub, hs, err := c.subscribe(f.Pattern, f.Match)
		if err != nil {
			return uplinkwire.Errorf(f.ID, codeOf(err), "%v", err), nil
		}
		ok.Sub = sub
		return ok, func() {
			c.wg.Add(1)
			go func() {
				defer c.wg.Done()
				c.pump(sub, hs)
			}()
		}
	case uplinkwire.OpUnsubscribe:
		if !c.unsubscribe(f.Sub) {
			return uplinkwire.Errorf(f.ID, uplinkwire.CodeNotFound, "no subscription %d", f.Sub), nil
		}
		return ok, nil
	case uplinkwire.OpInterceptors:
		ids, err := c.h.Interceptors(f.Topic)
		if err != nil {
			return uplinkwire.Errorf(f.ID, uplinkwire.CodeFailed, "%v", err), nil
		}
		ok.IDs = ids
		return ok, nil
	case uplinkwire.OpHoldsGrant:
		held, err := c.h.HoldsGrant(f.Capsule, f.Grant)
		if err != nil {
			return uplinkwire.Errorf(f.ID, uplinkwire.CodeFailed, "%v", err), nil
		}
		ok.Held = held
		return ok, nil
	case uplinkwire.OpQuery:
		return c.query(f), nil
	case uplinkwire.OpWorkspace:
		return c.setWorkspace(f), nil
	case uplinkwire.OpLoad:
		return c.load(f), nil
	case uplinkwire.OpAttachMCP:
		return c.attachMCP(f), nil
	}
	return uplinkwire.Errorf(f.ID, uplinkwire.CodeBadFrame, "unknown op %q", f.Op), nil
}

// errLimit is a subscription over maxSubsPerClient.
type errLimit struct{}

func (errLimit) Error() string {
	return fmt.Sprintf("a client may hold at most %d subscriptions", maxSubsPerClient)
}

func codeOf(err error) string {
	if _, ok := err.(errLimit); ok {
		return uplinkwire.CodeLimit
	}
	return uplinkwire.CodeFailed
}

// subscribe opens a subscription for the client's principal, of the events
// on pattern that match has (see matches); the caller starts its pump. The
// kernel applies match as each event is published, so one principal's
// other clients' turns never reach this subscription's queue nor wake its
// pump: with n clients of one principal each event costs one queue and one
// wake-up, not n (docs/rationale/daemon.md, "Why does a client's match run
// where events are published?").
func (c *client) subscribe(pattern string, match map[string]string) (uint64, hostapi.SubscriptionID, error) {
	c.mu.Lock()
	if len(c.subs) >= maxSubsPerClient {
		c.mu.Unlock()
		return 0, 0, errLimit{}
	}
	c.mu.Unlock()
	hs, err := c.srv.up.SubscribeAs(c.principal, pattern, func(payload []byte) bool { return matches(match, payload) })
	if err != nil {
		return 0, 0, err
	}
	c.mu.Lock()
	c.nextSub++
	id := c.nextSub
	c.subs[id] = hs
	c.mu.Unlock()
	return id, hs, nil
}

// unsubscribe ends subscription id; its pump sees it closed.
func (c *client) unsubscribe(id uint64) bool {
	c.mu.Lock()
	hs, ok := c.subs[id]
	delete(c.subs, id)
	c.mu.Unlock()
	if ok {
		_ = c.h.Unsubscribe(hs)
	}
	return ok
}

// pumpWait bounds one receive, so a pump notices its client leaving.
const pumpWait = 10 * time.Second

// pump moves one subscription's messages to the client. It never waits
// for the client: a write that stalls hands the pump to a takeover, which
// goes on receiving and queueing, and a full queue disconnects the client.
// The subscription's match was applied as the messages were published
// (subscribe), so every message received here is relayed, with the losses
// of its route. The caller holds a c.wg slot for it.
func (c *client) pump(id uint64, hs hostapi.SubscriptionID) {
	takeover := func() {
		defer c.wg.Done()
		c.pump(id, hs)
	}
	for {
		m, err := c.h.Recv(hs, pumpWait)
		switch hostapi.CodeOf(err) {
		case hostapi.CodeOK:
		case hostapi.CodeTimeout:
			if c.gone() {
				return
			}
			continue
		default:
			return // unsubscribed, client gone, or the capsule unloading
		}
		ev := uplinkwire.Frame{Op: uplinkwire.OpEvent, Sub: id, Topic: m.Topic, Source: m.SourceID, Principal: m.Principal, Host: m.Host, Lost: m.Lost}
		if json.Valid(m.Payload) {
			ev.Payload = json.RawMessage(m.Payload)
		}
		// Said here, where it costs a lookup, so a client checking who
		// may publish a consolidated tool result (DESIGN §4c) needs no
		// holds_grant round trip per result.
		if held, err := c.h.HoldsGrant(m.SourceID, hostapi.GrantToolMiddleware); err == nil {
			ev.ToolMiddleware = &held
		}
		if handedOver := c.send(ev, takeover); handedOver || c.gone() {
			return
		}
	}
}

// send writes f, or queues it behind the write in progress, without
// waiting for the client to read (see outbox). A client whose queue is
// full is disconnected (it is not reading). takeover continues the
// caller's loop if the write stalls; handedOver then says the caller must
// return.
func (c *client) send(f uplinkwire.Frame, takeover func()) (handedOver bool) {
	b, ok := c.frame(f)
	if !ok {
		return false
	}
	res, handedOver := c.out.put(b, takeover, func() { c.wg.Add(1) }, c.wg.Done)
	if res == written {
		c.traffic.add(0, len(b))
		c.touch()
	}
	c.settle(res)
	return handedOver
}

// write is send for a frame whose write may hold the caller (the
// handshake's answer, a connection's last word); false means the client
// is going away.
func (c *client) write(f uplinkwire.Frame) bool {
	b, ok := c.frame(f)
	if !ok {
		return false
	}
	res, _ := c.out.put(b, nil, nil, nil)
	if res == written {
		c.traffic.add(0, len(b))
	}
	c.settle(res)
	return res == written
}

// frame encodes f for the outbox; false once the client is going away.
func (c *client) frame(f uplinkwire.Frame) ([]byte, bool) {
	if c.gone() {
		return nil, false
	}
	body, err := uplinkwire.Encode(f)
	if err != nil {
		c.h.Log(hostapi.LogWarn, fmt.Sprintf("uplink: a frame for %s dropped: %v", c.principal, err))
		body, _ = uplinkwire.Encode(uplinkwire.Errorf(f.ID, uplinkwire.CodeTooLarge, "the answer was over the frame limit (%s on %s)", f.Op, f.Topic))
	}
	return framed(body), true
}

// settle acts on what became of a frame: a client that fell behind or
// whose stream broke is ended, and its stream closed, which wakes its
// reader and frees a write stuck on its full socket buffer.
func (c *client) settle(res outcome) {
	switch res {
	case overflow:
		c.h.Log(hostapi.LogWarn, fmt.Sprintf("uplink: disconnected a client of %s: %d frames waited for it to read", c.principal, c.out.limit))
	case failed:
	default:
		return
	}
	c.end()
	_ = c.h.NetClose(c.stream)
}

// fatal writes f and ends the client.
func (c *client) fatal(f uplinkwire.Frame) {
	c.write(f)
	c.end()
}

// end starts the client's teardown: nothing more is accepted for it; a
// write in progress still drains what is queued (an error frame
// explaining why, say).
func (c *client) end() {
	c.stop.Do(func() {
		close(c.done)
		c.out.close()
	})
}

func (c *client) gone() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// teardown ends the client, its subscriptions and its goroutines.
func (c *client) teardown() {
	c.end()
	c.mu.Lock()
	subs := c.subs
	c.subs = map[uint64]hostapi.SubscriptionID{}
	c.mu.Unlock()
	for _, hs := range subs {
		_ = c.h.Unsubscribe(hs)
	}
	c.wg.Wait()
	c.closeScopes()
	_ = c.h.NetClose(c.stream)
	c.h.Log(hostapi.LogInfo, "uplink: client of "+c.principal+" disconnected")
}

// matches reports whether payload has every member of match. The kernel's
// answer to a client's request (request_failed) matches when its
// correlation id is one of match's values: a client correlates its
// requests by the id it also matches its events with (a turn id).
func matches(match map[string]string, payload []byte) bool {
	if f, ok := ipc.AsRequestFailed(payload); ok {
		for _, want := range match {
			if f.CorrelationID == want {
				return true
			}
		}
		return false
	}
	for name, want := range match {
		if !ipc.MemberEquals(payload, name, want) {
			return false
		}
	}
	return true
}
