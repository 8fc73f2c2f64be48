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

// tookGrace is how long a request no host has said it took is given for
// one to say so, once a host that could have taken it is lost: the host
// that takes a request answers before its handler starts, but the answer
// leaves its connection's buffer asynchronously, and a host going down
// right after taking one may never send it (TestHostLostMidCallTheOther-
// HostServesTheNext hung until the tool's timeout, 1 run in 10 under
// load). A host still there that took it has answered well within this.
const tookGrace = aliveMisses * aliveInterval

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
	// owed is, per host, the requests answered as lost while it held them,
	// which it may still be running (abandon.go); seq numbers the liveness
	// questions that carry them.
	owed map[string][]owed
	seq  uint64
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
	// orphanedBy is a host lost while it could have held the request,
	// no host having said it took it yet, since orphanedAt (answerLost).
	orphanedBy string
	orphanedAt time.Time
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
	if inboxAsker(m.Reply, "took") == "" {
		return
	}
	if err := m.Respond([]byte(t.opts.HostID)); err != nil {
		t.log.Debug("natsbus: the requester not told this host took its request", "error", err)
	}
}

// inboxAsker is the host whose inbox reply is, for answers of kind
// ("took", "alive"), or "" if reply is no host's inbox: a host answers
// nowhere else.
func inboxAsker(reply, kind string) string {
	rest, ok := strings.CutPrefix(reply, PresencePrefix+".")
	if !ok {
		return ""
	}
	asker, tail, ok := strings.Cut(rest, ".")
	if !ok || !strings.HasPrefix(tail, "inbox."+kind+".") {
		return ""
	}
	return asker
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
		gone := len(m.Data) == 0 && m.Header.Get("Status") == "503"
		if seq, err := strconv.ParseUint(string(m.Data), 10, 64); err == nil && !gone {
			t.abandonDelivered(host, seq)
		}
		t.aliveAnswered(host, gone)
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
		r.hosts, r.taken, r.orphanedBy = []string{host}, true, ""
	}
}

// askAlive asks, on nc, each host holding one of this host's requests, or
// owed an abandonment, whether it is still there. Called by the announcing goroutine.
func (t *Transport) askAlive(nc *nats.Conn) {
	for _, h := range t.requestHosts() {
		_ = nc.PublishMsg(t.abandonQuestion(h)) // a failed publish is retried next tick
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
	if !c.holdsLocked(host) {
		// Asked only for what it is owed: nothing of this host's waits
		// on it, so there is nothing to answer as lost.
		c.mu.Unlock()
		return
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
	hosts := c.owedHostsLocked()
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
// by none; every request, held or not yet, when all is lost. A request no
// host has said it took, of which a host that could have taken it is lost,
// is orphaned: answered too if no host says it took it within tookGrace
// (answerOrphans).
func (t *Transport) answerLost(reason string, lost func(host string) bool) {
	var answers []LostRequest
	c := &t.requests
	c.mu.Lock()
	now := time.Now()
	c.sweepLocked(now)
	for k, r := range c.pending {
		last := ""
		var abandoned []string
		r.hosts = slices.DeleteFunc(r.hosts, func(h string) bool {
			if lost(h) {
				last = h
				abandoned = append(abandoned, h)
				return true
			}
			return false
		})
		switch {
		case len(r.hosts) == 0 && (last != "" || lost("")):
			answers = append(answers, c.answerLocked(k, r, last, reason, abandoned, now))
		case last != "" && !r.taken && r.orphanedBy == "":
			r.orphanedBy, r.orphanedAt = last, now
		}
	}
	c.mu.Unlock()
	t.reportLost(answers)
}

// answerOrphans answers the orphaned requests no host said it took within
// tookGrace: the lost host had them. Called by the announcing goroutine.
func (t *Transport) answerOrphans(now time.Time) {
	var answers []LostRequest
	c := &t.requests
	c.mu.Lock()
	for k, r := range c.pending {
		if r.orphanedBy != "" && !r.taken && now.Sub(r.orphanedAt) >= tookGrace {
			answers = append(answers, c.answerLocked(k, r, r.orphanedBy, LostGone, nil, now))
		}
	}
	c.mu.Unlock()
	t.reportLost(answers)
}

// answerLocked forgets request k, answered as lost with host, and owes
// the hosts that may still run it an abandonment: abandoned, and the host
// that orphaned it if any. c.mu must be held.
func (c *inflight) answerLocked(k requestKey, r *remoteRequest, host, reason string, abandoned []string, now time.Time) LostRequest {
	c.deleteLocked(k, r)
	if r.orphanedBy != "" && !slices.Contains(abandoned, r.orphanedBy) {
		abandoned = append(abandoned, r.orphanedBy)
	}
	for _, h := range abandoned {
		c.oweLocked(h, AbandonedRequest{Principal: r.req.Principal, CorrelationID: r.req.CorrelationID()}, now)
	}
	return LostRequest{Request: r.req, Host: host, Reason: reason}
}

// reportLost hands the requests answered as lost to Options.RequestLost.
func (t *Transport) reportLost(answers []LostRequest) {
	if t.opts.RequestLost == nil {
		return
	}
	for _, a := range answers {
		t.log.Warn("natsbus: the host handling a request was lost; answering the requester",
			"topic", a.Request.Topic, "correlation_id", a.Request.CorrelationID(), "lost_host", a.Host, "reason", a.Reason)
		t.opts.RequestLost(a)
	}
}

// holdsLocked says whether host holds one of this host's requests. c.mu
// must be held.
func (c *inflight) holdsLocked(host string) bool {
	for _, r := range c.pending {
		if slices.Contains(r.hosts, host) {
			return true
		}
	}
	return false
}

// RemoteRequests is the number of requests this host is tracking on other
// hosts.
func (t *Transport) RemoteRequests() int {
	t.requests.mu.Lock()
	defer t.requests.mu.Unlock()
	return len(t.requests.pending)
}
