package natsbus

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/astrid-go/astrid/ipc"
)

// A request published here (ipc.Envelope.IsRequest) that no capsule of this
// host intercepts travels as a NATS request: its reply subject is this
// host's inbox, and the host whose capsule takes it — NATS hands it to one
// host of the capsule's queue group — answers there with its id at once
// (took). The envelope that answers the request still travels as an
// envelope, on its publisher's subject, so that the broker checks who sent
// it. While a request is held on another host, this host asks that host's
// liveness subject every aliveInterval (aliveSubject); NATS answers "no
// responders" once no one subscribes there any more — the process died,
// its node shut down, or its link broke — and two in a row take the host as
// lost: Options.RequestLost answers the requests it held (DESIGN §9: "no
// responders" or the deadline tells the caller a host is gone; the
// deadline is dispatch's own). Nothing is asked while no request is held
// elsewhere.

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
	// LostGone: NATS answered "no responders" on its liveness subject
	// twice in a row: its connections to the cluster are gone.
	LostGone    = "its connection to the cluster closed"
	LostOwnLink = "this host lost its NATS connection"
)

// aliveInterval is how often this host asks after the hosts holding its
// requests; aliveMisses how many "no responders" in a row take one as lost
// (one may be a reconnect in progress).
const (
	aliveInterval = 250 * time.Millisecond
	aliveMisses   = 2
)

// maxRemoteRequests bounds the requests tracked at once; beyond it a
// request is still forwarded, only not answered by this host if its host is
// lost (the requester then waits for its deadline, as without tracking).
const maxRemoteRequests = 1 << 16

// maxRequestAge is how long a request without a deadline is tracked: as
// long as dispatch lets any request wait (dispatch.MaxRequestTimeout).
const maxRequestAge = time.Hour

// responseGrant is the broker's response permission of a host's own
// connections: each may publish on the reply subject of a message it
// received, for a minute. The server counts every further delivery of that
// message to the connection as one use (the receiver is handed a request
// once in the host's group and once in each capsule's group that matches),
// so one use per delivery is not enough; the code answers only into a
// host's inbox (took, answerAlive).
func responseGrant() *server.ResponsePermission {
	return &server.ResponsePermission{MaxMsgs: 64, Expires: time.Minute}
}

// aliveSubject is the subject host answers liveness questions on; its
// presence connection alone may subscribe to it.
func aliveSubject(host string) string { return PresencePrefix + "." + host + ".alive" }

// hostInbox is where the answers to host's questions come back: the
// hosts that took its requests (.took.<token>) and the liveness answers
// (.alive.<host>). Only host may subscribe there, and a host publishes
// there only as the answer to a message it received (the broker's response
// permission).
func hostInbox(host string) string { return PresencePrefix + "." + host + ".inbox" }

// presenceSubjects are what a host's presence connection may publish and
// subscribe to (dialPresence, MintHostCreds): its own presence subject and
// every host's liveness subject; every host's presence, its own liveness
// subject and its own inbox. Answers go out under the broker's response
// permission.
func presenceSubjects(host string) (publish, subscribe []string) {
	return []string{PresencePrefix + "." + host, aliveSubject("*")},
		[]string{PresencePrefix + ".*", aliveSubject(host), hostInbox(host) + ".>"}
}

// inflight is the requests published on this host whose handlers are all
// on other hosts, with the hosts that took them. A request is forgotten
// when a reply to it is published here or arrives from another host, when
// it is answered as lost, or once its deadline passed.
type inflight struct {
	mu      sync.Mutex
	pending map[requestKey]*remoteRequest
	tokens  map[string]requestKey
	next    uint64
	// misses counts, per host holding a request, the liveness questions in
	// a row NATS answered "no responders".
	misses map[string]int
}

// requestKey names a request as dispatch does: a reply answers the request
// of its principal whose reply address is the reply's topic and whose
// correlation id it carries.
type requestKey struct {
	principal, replyTo, correlation string
}

type remoteRequest struct {
	req   *ipc.Envelope
	token string
	// hosts are the host that took the request or, until one says so,
	// the hosts announcing an interceptor of its topic (askAlive).
	hosts   []string
	taken   bool
	expires time.Time
}

// track observes an envelope this host forwards, with the ids of this
// host's capsules that intercepted it: a request none of them intercepts
// starts being tracked, and the reply subject it travels with is returned;
// a reply ends the request it answers. Any other envelope costs a nil
// check.
func (t *Transport) track(e *ipc.Envelope, ran []byte) string {
	if e.Provenance == nil {
		return ""
	}
	switch {
	case e.IsReply():
		t.endRequest(e)
	case e.IsRequest() && len(ran) == 0:
		// A handler here answers for itself: its failures are this
		// host's dispatcher's to answer.
		return t.trackRequest(e)
	}
	return ""
}

func (t *Transport) trackRequest(e *ipc.Envelope) string {
	now := time.Now()
	expires := now.Add(maxRequestAge)
	if d := e.Deadline(); d > 0 {
		expires = time.Unix(0, d)
	}
	// A copy without the payload: e belongs to the bus, and answering needs
	// only the request's address.
	req := &ipc.Envelope{Topic: e.Topic, SourceID: e.SourceID, Principal: e.Principal, Scope: e.Scope, Seq: e.Seq, Timestamp: e.Timestamp}
	req.SetRequest(e.ReplyTo(), e.CorrelationID(), e.Deadline())
	k := keyOf(e.Principal, e.ReplyTo(), e.CorrelationID())
	c := &t.requests
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending == nil {
		c.pending, c.tokens = make(map[requestKey]*remoteRequest), make(map[string]requestKey)
	}
	if len(c.pending) >= maxRemoteRequests {
		c.sweepLocked(now)
	}
	if len(c.pending) >= maxRemoteRequests {
		t.log.Warn("natsbus: too many requests in flight on other hosts; this one is not answered if its host is lost",
			"topic", e.Topic, "correlation_id", e.CorrelationID())
		return ""
	}
	if old := c.pending[k]; old != nil { // the same request again: a retry
		delete(c.tokens, old.token)
	}
	c.next++
	token := strconv.FormatUint(c.next, 36)
	c.pending[k] = &remoteRequest{req: req, token: token, expires: expires}
	c.tokens[token] = k
	return hostInbox(t.opts.HostID) + ".took." + token
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
	r, ok := c.pending[k]
	if !ok {
		return false
	}
	c.deleteLocked(k, r)
	return true
}

// deleteLocked forgets request k. c.mu must be held.
func (c *inflight) deleteLocked(k requestKey, r *remoteRequest) {
	delete(c.pending, k)
	delete(c.tokens, r.token)
}

// sweepLocked forgets the requests whose deadline passed: dispatch has
// answered them (ipc.FailTimeout). c.mu must be held.
func (c *inflight) sweepLocked(now time.Time) {
	for k, r := range c.pending {
		if now.After(r.expires) {
			c.deleteLocked(k, r)
		}
	}
}

// took tells the host that published the request m carries that this host
// took it: the answer goes to the reply subject, only if that is a host's
// inbox (a publisher cannot have this host publish anywhere else).
func (t *Transport) took(m *nats.Msg) {
	rest, ok := strings.CutPrefix(m.Reply, PresencePrefix+".")
	if !ok {
		return
	}
	if _, tail, ok := strings.Cut(rest, "."); !ok || !strings.HasPrefix(tail, "inbox.took.") {
		return
	}
	if err := m.Respond([]byte(t.opts.HostID)); err != nil {
		t.log.Debug("natsbus: the requester not told this host took its request", "error", err)
	}
}

// inboxed handles an answer in this host's inbox: a host that took a
// request, or a liveness answer.
func (t *Transport) inboxed(m *nats.Msg) {
	rest, ok := strings.CutPrefix(m.Subject, hostInbox(t.opts.HostID)+".")
	if !ok {
		return
	}
	if token, ok := strings.CutPrefix(rest, "took."); ok {
		t.requestTaken(token, string(m.Data))
	} else if host, ok := strings.CutPrefix(rest, "alive."); ok {
		t.aliveAnswered(host, len(m.Data) == 0 && m.Header.Get("Status") == "503")
	}
}

// requestTaken records that host took the request token names.
func (t *Transport) requestTaken(token, host string) {
	if checkCapsuleID(host) != nil || host == t.opts.HostID {
		return
	}
	c := &t.requests
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.pending[c.tokens[token]]; r != nil && !r.taken {
		r.hosts, r.taken = []string{host}, true
	}
}

// answerAlive answers a liveness question whose answer goes to a host's
// inbox, and nothing else: a host cannot make another publish anywhere
// but there.
func answerAlive(m *nats.Msg) {
	rest, ok := strings.CutPrefix(m.Reply, PresencePrefix+".")
	if !ok {
		return
	}
	if _, tail, ok := strings.Cut(rest, "."); !ok || !strings.HasPrefix(tail, "inbox.alive.") {
		return
	}
	_ = m.Respond(nil)
}

// askAlive asks, on nc, each host holding one of this host's requests
// whether it is still there. Called by the announcing goroutine.
func (t *Transport) askAlive(nc *nats.Conn) {
	for _, h := range t.requestHosts() {
		msg := &nats.Msg{Subject: aliveSubject(h), Reply: hostInbox(t.opts.HostID) + ".alive." + h, Header: nats.Header{}}
		_ = nc.PublishMsg(msg) // a failed publish is retried next tick
	}
}

// aliveAnswered counts host's answer; two "no responders" in a row take it
// as lost.
func (t *Transport) aliveAnswered(host string, gone bool) {
	c := &t.requests
	c.mu.Lock()
	if !gone {
		delete(c.misses, host)
		c.mu.Unlock()
		return
	}
	if c.misses == nil {
		c.misses = make(map[string]int)
	}
	c.misses[host]++
	lost := c.misses[host] >= aliveMisses
	if lost {
		delete(c.misses, host)
	}
	c.mu.Unlock()
	if lost {
		t.log.Warn("natsbus: host lost: no one answers on its liveness subject", "lost_host", host)
		t.forget(host)
		t.answerLost(LostGone, func(h string) bool { return h == host })
	}
}

// requestHosts is the hosts holding at least one tracked request, each
// once. A request no host has said it took yet (the answer may never come:
// the host went down as it took it) is taken to be held by the hosts that
// announce an interceptor of its topic, so that it is answered once they
// are all gone.
func (t *Transport) requestHosts() []string {
	peers := t.peers()
	c := &t.requests
	c.mu.Lock()
	defer c.mu.Unlock()
	var hosts []string
	for _, r := range c.pending {
		if !r.taken && len(r.hosts) == 0 {
			r.hosts = interceptingHosts(peers, r.req.Topic)
		}
		for _, h := range r.hosts {
			if !slices.Contains(hosts, h) {
				hosts = append(hosts, h)
			}
		}
	}
	return hosts
}

// interceptingHosts is the hosts of peers announcing an interceptor of
// topic, sorted.
func interceptingHosts(peers map[string]HostInfo, topic string) []string {
	var hosts []string
	for id, h := range peers {
		for _, patterns := range h.Intercepts {
			if slices.ContainsFunc(patterns, func(p string) bool { return ipc.MatchInterceptor(p, topic) }) {
				hosts = append(hosts, id)
				break
			}
		}
	}
	slices.Sort(hosts)
	return hosts
}

// answerLost removes the hosts lost says are lost from every tracked
// request and answers, through Options.RequestLost, the requests left held
// by none; every request, held or not yet, when all is lost.
func (t *Transport) answerLost(reason string, lost func(host string) bool) {
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
		if len(r.hosts) == 0 && (last != "" || lost("")) {
			c.deleteLocked(k, r)
			answers = append(answers, LostRequest{Request: r.req, Host: last, Reason: reason})
		}
	}
	c.mu.Unlock()
	if t.opts.RequestLost == nil {
		return
	}
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
