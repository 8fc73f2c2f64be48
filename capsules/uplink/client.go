package uplink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/uplinkwire"
)

// client is one connected frontend: its reader (run), its writer and one
// pump per subscription.
type client struct {
	srv       *server
	h         hostapi.Host
	stream    hostapi.NetHandle
	principal string
	owner     bool        // the peer's uid is the daemon owner's (Query.Owner)
	ingress   []string    // what it may publish (Settings.Ingress)
	traffic   *traffic    // its principal's socket counters
	in        frameReader // used by the reader (run) only

	// out is the bounded outbound queue: whoever produces a frame for
	// the client (its reader's answers, its pumps' events) puts it here
	// without waiting; a full queue disconnects the client.
	out  chan []byte   // framed frames (framed)
	done chan struct{} // closed once the client is going away
	stop sync.Once

	mu      sync.Mutex
	subs    map[uint64]hostapi.SubscriptionID // wire sub → host subscription
	nextSub uint64

	wg sync.WaitGroup // the writer and the pumps
}

func newClient(srv *server, stream hostapi.NetHandle, principal string) *client {
	return &client{
		srv: srv, h: srv.h, stream: stream, principal: principal, in: frameReader{n: srv.h, stream: stream},
		out: make(chan []byte, srv.s.ClientQueue), done: make(chan struct{}),
		subs: map[uint64]hostapi.SubscriptionID{},
	}
}

// readWait bounds one wait for a request; an idle client is fine, the
// reader simply waits again.
const readWait = 30 * time.Second

// run serves the client until it leaves, breaks the protocol beyond
// repair, falls behind, or the capsule unloads.
func (c *client) run(ctx context.Context) {
	c.wg.Add(1)
	go c.writer()
	defer c.teardown()
	if !c.handshake() {
		return
	}
	for ctx.Err() == nil {
		body, err := c.in.next(readWait)
		switch {
		case err == nil:
		case errors.Is(err, errMidFrame):
			// Cut by time (not by the peer leaving or the unload): say so.
			if code := hostapi.CodeOf(err); code == hostapi.CodeTimeout || code == hostapi.CodeInternal {
				c.fatal(uplinkwire.Errorf(0, uplinkwire.CodeBadFrame, "a frame started and did not finish within %s", frameWait))
			}
			return
		case hostapi.CodeOf(err) == hostapi.CodeTimeout:
			if c.gone() {
				return
			}
			continue
		case hostapi.CodeOf(err) == hostapi.CodeTooLarge:
			c.fatal(uplinkwire.Errorf(0, uplinkwire.CodeTooLarge, "%v", err))
			return
		default:
			return // closed, reset, cancelled
		}
		c.traffic.add(4+len(body), 0)
		f, err := uplinkwire.Decode(body)
		if err != nil {
			// The frame was whole, so the stream is still in step:
			// answer and go on.
			c.send(uplinkwire.Errorf(0, uplinkwire.CodeBadFrame, "%v", err))
			continue
		}
		reply, after := c.handle(f)
		c.send(reply)
		if after != nil {
			// After the answer is queued: a subscription's first event
			// must not reach the client before its id does.
			after()
		}
	}
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
	c.h.Log(hostapi.LogInfo, fmt.Sprintf("uplink: client %q connected as %s", f.Client, c.principal))
	return c.send(uplinkwire.Frame{Op: uplinkwire.OpWelcome, Version: uplinkwire.Version, Principal: c.principal})
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
		if err := c.srv.up.PublishAs(c.principal, f.Topic, payload); err != nil {
			return uplinkwire.Errorf(f.ID, uplinkwire.CodeFailed, "%v", err), nil
		}
		return ok, nil
	case uplinkwire.OpSubscribe:
		if !allowed(egress, f.Pattern) {
			return uplinkwire.Errorf(f.ID, uplinkwire.CodeNotAllowed, "clients may not subscribe to %q", f.Pattern), nil
		}
		sub, hs, err := c.subscribe(f.Pattern)
		if err != nil {
			return uplinkwire.Errorf(f.ID, codeOf(err), "%v", err), nil
		}
		ok.Sub = sub
		return ok, func() {
			c.wg.Add(1)
			go c.pump(sub, hs)
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

// subscribe opens a subscription for the client's principal; the caller
// starts its pump.
func (c *client) subscribe(pattern string) (uint64, hostapi.SubscriptionID, error) {
	c.mu.Lock()
	if len(c.subs) >= maxSubsPerClient {
		c.mu.Unlock()
		return 0, 0, errLimit{}
	}
	c.mu.Unlock()
	hs, err := c.srv.up.SubscribeAs(c.principal, pattern)
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

// pump moves one subscription's messages to the client's queue. It never
// waits for the client: a full queue disconnects it.
func (c *client) pump(id uint64, hs hostapi.SubscriptionID) {
	defer c.wg.Done()
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
		ev := uplinkwire.Frame{Op: uplinkwire.OpEvent, Sub: id, Topic: m.Topic, Source: m.SourceID, Principal: m.Principal, Lost: m.Lost}
		if json.Valid(m.Payload) {
			ev.Payload = json.RawMessage(m.Payload)
		}
		if !c.send(ev) {
			return
		}
	}
}

// send queues f for the writer without waiting. A client whose queue is
// full is disconnected (it is not reading); false means the client is
// going away.
func (c *client) send(f uplinkwire.Frame) bool {
	body, err := uplinkwire.Encode(f)
	if err != nil {
		c.h.Log(hostapi.LogWarn, fmt.Sprintf("uplink: a frame for %s dropped: %v", c.principal, err))
		body, _ = uplinkwire.Encode(uplinkwire.Errorf(f.ID, uplinkwire.CodeTooLarge, "the answer was over the frame limit (%s on %s)", f.Op, f.Topic))
	}
	b := framed(body)
	select {
	case <-c.done:
		return false
	default:
	}
	select {
	case c.out <- b:
		c.traffic.add(0, len(b))
		return true
	default:
		c.h.Log(hostapi.LogWarn, fmt.Sprintf("uplink: disconnected a client of %s: %d frames waited for it to read", c.principal, cap(c.out)))
		c.end()
		// Nothing more is worth writing to it: closing the stream now
		// also frees a writer stuck on its full socket buffer.
		_ = c.h.NetClose(c.stream)
		return false
	}
}

// fatal writes f directly (the queue may be why) and ends the client.
func (c *client) fatal(f uplinkwire.Frame) {
	c.send(f)
	c.end()
}

// end starts the client's teardown: the writer drains what is queued and
// closes the stream, which wakes the reader.
func (c *client) end() { c.stop.Do(func() { close(c.done) }) }

func (c *client) gone() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// writer writes queued frames until the client ends, then what is still
// queued (an error frame explaining why, say), then closes the stream.
func (c *client) writer() {
	defer c.wg.Done()
	for {
		select {
		case b := <-c.out:
			if err := writeFramed(c.h, c.stream, b); err != nil {
				c.end()
				_ = c.h.NetClose(c.stream)
				return
			}
		case <-c.done:
			for {
				select {
				case b := <-c.out:
					if writeFramed(c.h, c.stream, b) != nil {
						_ = c.h.NetClose(c.stream)
						return
					}
				default:
					_ = c.h.NetClose(c.stream)
					return
				}
			}
		}
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
	c.h.Log(hostapi.LogInfo, "uplink: client of "+c.principal+" disconnected")
}
