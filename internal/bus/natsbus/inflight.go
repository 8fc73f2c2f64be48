package natsbus

import (
	"slices"
	"sync"
	"time"

	"github.com/astrid-go/astrid/ipc"
)

// LostRequest is a request this host forwarded whose handlers were all on
// other hosts, all of which were lost before it was answered (DESIGN §9: a
// host that disappears mid-request is detected and the requester gets a
// failure answer; §4b: the kernel gives it without knowing the topic).
type LostRequest struct {
	// Request is the request as it was forwarded: topic, source, principal,
	// scope, reply address, correlation id and deadline; not its payload.
	Request *ipc.Envelope
	// Host is the host lost last, the one that was handling the request.
	Host string
	// Reason says how the loss was detected.
	Reason string
}

// Why a host is taken as lost.
const (
	LostLeft     = "it left the bus"
	LostSilent   = "it has not announced itself for three presence intervals"
	LostOwnLink  = "this host lost its NATS connection"
	LostShutdown = "its NATS node shut down"
)

// maxRemoteRequests bounds the requests tracked at once; beyond it a
// request is still forwarded, only not answered by this host if its host is
// lost (the requester then waits for its deadline, as without tracking).
const maxRemoteRequests = 1 << 16

// maxRequestAge is how long a request without a deadline is tracked: as
// long as dispatch lets any request wait (dispatch.MaxRequestTimeout).
const maxRequestAge = time.Hour

// inflight is the requests published on this host whose handlers are all
// on other hosts, with the hosts elected to handle them (elect.go). A
// request is forgotten when a reply to it is published here or arrives from
// another host, when it is answered as lost, or once its deadline passed.
type inflight struct {
	mu      sync.Mutex
	pending map[requestKey]*remoteRequest
}

// requestKey names a request as dispatch does: a reply answers the request
// of its principal whose reply address is the reply's topic and whose
// correlation id it carries.
type requestKey struct {
	principal, replyTo, correlation string
}

type remoteRequest struct {
	req     *ipc.Envelope
	hosts   []string
	expires time.Time
}

// track observes an envelope this host forwards: a request whose handlers
// are all elsewhere starts being tracked; a reply ends the request it
// answers. Any other envelope costs a nil check.
func (t *Transport) track(e *ipc.Envelope, view *peerView) {
	if t.opts.RequestLost == nil || e.Provenance == nil {
		return
	}
	switch {
	case e.IsReply():
		t.endRequest(e)
	case e.IsRequest():
		t.trackRequest(e, view)
	}
}

func (t *Transport) trackRequest(e *ipc.Envelope, view *peerView) {
	// A handler here answers for itself: its failures are this host's
	// dispatcher's to answer, and it may answer after another host's loss.
	if t.interceptedHere(e.Topic) {
		return
	}
	var hosts []string
	for _, capsule := range remoteInterceptors(view.hosts, e.Topic) {
		if h := electedIn(view.ids, view, capsule, t.opts.HostID, e.Seq, ""); h != "" && !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	if len(hosts) == 0 {
		// No interceptor anywhere: a route subscriber may answer, and
		// presence does not say where they are; the deadline holds.
		return
	}
	now := time.Now()
	expires := now.Add(maxRequestAge)
	if d := e.Deadline(); d > 0 {
		expires = time.Unix(0, d)
	}
	// A copy without the payload: e belongs to the bus, and answering needs
	// only the request's address.
	req := &ipc.Envelope{Topic: e.Topic, SourceID: e.SourceID, Principal: e.Principal, Scope: e.Scope, Seq: e.Seq, Timestamp: e.Timestamp}
	req.SetRequest(e.ReplyTo(), e.CorrelationID(), e.Deadline())
	c := &t.requests
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending == nil {
		c.pending = make(map[requestKey]*remoteRequest)
	}
	if len(c.pending) >= maxRemoteRequests {
		c.sweepLocked(now)
	}
	if len(c.pending) >= maxRemoteRequests {
		t.log.Warn("natsbus: too many requests in flight on other hosts; this one is not answered if its host is lost",
			"topic", e.Topic, "correlation_id", e.CorrelationID())
		return
	}
	c.pending[keyOf(e.Principal, e.ReplyTo(), e.CorrelationID())] = &remoteRequest{req: req, hosts: hosts, expires: expires}
}

func keyOf(principal, replyTo, correlation string) requestKey {
	return requestKey{principal: principal, replyTo: replyTo, correlation: correlation}
}

// endRequest forgets the request the reply e answers, reporting whether
// this host was tracking it.
func (t *Transport) endRequest(e *ipc.Envelope) bool {
	k := keyOf(e.Principal, e.Topic, e.CorrelationID())
	c := &t.requests
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.pending[k]; !ok {
		return false
	}
	delete(c.pending, k)
	return true
}

// sweepLocked forgets the requests whose deadline passed: dispatch has
// answered them (ipc.FailTimeout). c.mu must be held.
func (c *inflight) sweepLocked(now time.Time) {
	for k, r := range c.pending {
		if now.After(r.expires) {
			delete(c.pending, k)
		}
	}
}

// interceptedHere reports whether a capsule attached here intercepts
// topic: this host's dispatcher then ran it itself. It reads a snapshot,
// so that Forward never waits behind an Attach.
func (t *Transport) interceptedHere(topic string) bool {
	m := t.intercepted.Load()
	if m == nil {
		return false
	}
	for p := range *m {
		if ipc.MatchInterceptor(p, topic) {
			return true
		}
	}
	return false
}

// remoteInterceptors is the ids of the capsules the hosts announce with an
// interceptor pattern matching topic, sorted.
func remoteInterceptors(hosts map[string]HostInfo, topic string) []string {
	var ids []string
	for _, h := range hosts {
		for id, patterns := range h.Intercepts {
			if slices.Contains(ids, id) {
				continue
			}
			if slices.ContainsFunc(patterns, func(p string) bool { return ipc.MatchInterceptor(p, topic) }) {
				ids = append(ids, id)
			}
		}
	}
	slices.Sort(ids)
	return ids
}

// hostLost answers, through Options.RequestLost, the tracked requests that
// only host was still handling.
func (t *Transport) hostLost(host, reason string) {
	t.answerLost(reason, func(h string) bool { return h == host })
}

// answerLost removes the hosts lost says are lost from every tracked
// request and answers the requests left with none.
func (t *Transport) answerLost(reason string, lost func(host string) bool) {
	if t.opts.RequestLost == nil {
		return
	}
	var answers []LostRequest
	c := &t.requests
	c.mu.Lock()
	c.sweepLocked(time.Now())
	for k, r := range c.pending {
		last := ""
		r.hosts = slices.DeleteFunc(r.hosts, func(h string) bool {
			if lost(h) {
				last = h
				return true
			}
			return false
		})
		if len(r.hosts) == 0 {
			delete(c.pending, k)
			answers = append(answers, LostRequest{Request: r.req, Host: last, Reason: reason})
		}
	}
	c.mu.Unlock()
	for _, a := range answers {
		t.log.Warn("natsbus: the host handling a request was lost; answering the requester",
			"topic", a.Request.Topic, "correlation_id", a.Request.CorrelationID(), "lost_host", a.Host, "reason", reason)
		t.opts.RequestLost(a)
	}
}

// RemoteRequests is the number of requests this host is tracking on other
// hosts.
func (t *Transport) RemoteRequests() int {
	t.requests.mu.Lock()
	defer t.requests.mu.Unlock()
	return len(t.requests.pending)
}
