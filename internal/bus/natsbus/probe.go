package natsbus

import (
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// LostGone says a host was taken as lost because the cluster itself said
// no one listens on its liveness subject any more: its presence connection
// is gone (the process died, or its link to the cluster broke). On an
// external cluster there is no route of this host's to watch (routes.go);
// this is how a SIGKILLed daemon there is detected at once.
const LostGone = "its connection to the cluster closed"

// probeInterval is how often this host asks after the hosts handling its
// requests; probeMisses how many "no responders" in a row take a host as
// lost (one may be a reconnect in progress).
const (
	probeInterval = 250 * time.Millisecond
	probeMisses   = 2
)

// aliveSubject is the subject host answers liveness probes on; its
// presence connection alone may subscribe to it.
func aliveSubject(host string) string { return PresencePrefix + "." + host + ".alive" }

// probeInbox is where the answers to host's probes come back, one subject
// per probed host: <inbox>.<probed host>. Only host may subscribe there,
// and a host publishes there only as the answer to a probe it received
// (the broker's response permission).
func probeInbox(host string) string { return PresencePrefix + "." + host + ".inbox" }

// presenceSubjects are what a host's presence connection may
// publish and subscribe to (dialPresence, MintHostCreds): its own presence
// subject and every host's liveness subject; every host's presence, its
// own liveness subject and its own probe inbox. Answers go out under the
// broker's response permission.
func presenceSubjects(host string) (publish, subscribe []string) {
	return []string{PresencePrefix + "." + host, aliveSubject("*")},
		[]string{PresencePrefix + ".*", aliveSubject(host), probeInbox(host) + ".>"}
}

// probes tracks the liveness probes of this host's presence connection.
type probes struct {
	mu sync.Mutex
	// misses counts, per probed host, the probes in a row the cluster
	// answered "no responders".
	misses map[string]int
	// working is set once this host's probe of itself was answered: its
	// credentials allow probes (older minted ones do not), and it says so
	// in its announcements so that others probe it.
	working bool
	// warned is set once the absence of probes was logged.
	warned bool
}

// subscribeProbes makes nc answer probes of this host and hear the answers
// to its own. A new presence connection (renewed credentials, which may
// not allow probes) has to show again that probes work before the host
// says it answers them.
func (t *Transport) subscribeProbes(nc *nats.Conn) error {
	t.probes.mu.Lock()
	t.probes.working = false
	t.probes.mu.Unlock()
	if _, err := nc.Subscribe(aliveSubject(t.opts.HostID), answerProbe); err != nil {
		return err
	}
	_, err := nc.Subscribe(probeInbox(t.opts.HostID)+".>", t.probeAnswered)
	return err
}

// answerProbe answers a probe whose answer goes to a host's probe inbox,
// and nothing else: a host cannot make another publish anywhere but there.
func answerProbe(m *nats.Msg) {
	rest, ok := strings.CutPrefix(m.Reply, PresencePrefix+".")
	if !ok {
		return
	}
	if host, _, ok := strings.Cut(rest, "."); !ok || !strings.HasPrefix(rest[len(host):], ".inbox.") {
		return
	}
	_ = m.Respond(nil)
}

// probe asks host whether it is still there; the answer (or the cluster's
// "no responders") comes to probeAnswered.
func probe(nc *nats.Conn, self, host string) error {
	return nc.PublishMsg(&nats.Msg{Subject: aliveSubject(host), Reply: probeInbox(self) + "." + host, Header: nats.Header{}})
}

// probeAnswered handles an answer to one of this host's probes.
func (t *Transport) probeAnswered(m *nats.Msg) {
	host, ok := strings.CutPrefix(m.Subject, probeInbox(t.opts.HostID)+".")
	if !ok {
		return
	}
	gone := len(m.Data) == 0 && m.Header.Get("Status") == "503"
	p := &t.probes
	p.mu.Lock()
	if host == t.opts.HostID {
		first := !gone && !p.working
		p.working = p.working || !gone
		p.mu.Unlock()
		if first {
			t.kickPresence() // tell the others they may probe this host
		}
		return
	}
	if !gone {
		delete(p.misses, host)
		p.mu.Unlock()
		return
	}
	if p.misses == nil {
		p.misses = make(map[string]int)
	}
	p.misses[host]++
	lost := p.misses[host] >= probeMisses
	if lost {
		delete(p.misses, host)
	}
	p.mu.Unlock()
	if lost {
		t.forgetHost(host, LostGone, "natsbus: host lost: no one answers on its liveness subject")
	}
}

// probing reports whether this host's probes work.
func (t *Transport) probing() bool {
	t.probes.mu.Lock()
	defer t.probes.mu.Unlock()
	return t.probes.working
}

// probeRunners probes, on nc, the hosts handling this host's requests
// that answer probes, and probes itself until its own probe is answered.
// Called by the announcing goroutine.
func (t *Transport) probeRunners(nc *nats.Conn, announced int) {
	if !t.probing() {
		if err := probe(nc, t.opts.HostID, t.opts.HostID); err != nil {
			return
		}
		// Announcements go out every interval; after two with no answer
		// to the self-probe, say why no host is detected at once.
		p := &t.probes
		p.mu.Lock()
		warn := announced >= 2 && !p.working && !p.warned
		p.warned = p.warned || warn
		p.mu.Unlock()
		if warn {
			t.log.Info("natsbus: liveness probes unavailable (host credentials minted before they existed?): a host killed mid-call is taken as lost only after three presence intervals; mint them again with astrid nats creds --host-only")
		}
		return
	}
	hosts := t.peers().hosts
	for _, h := range t.requestHosts() {
		if info, ok := hosts[h]; ok && info.Probed && !t.routeWatched(info) {
			_ = probe(nc, t.opts.HostID, h) // a failed publish is retried next tick
		}
	}
}

// routeWatched reports whether h runs its own embedded node, other than
// this host's: its loss is then its node's route closing (routes.go),
// which names it more exactly, so it is not probed as well.
func (t *Transport) routeWatched(h HostInfo) bool {
	return t.opts.Server != nil && h.Server != "" && h.Server != t.opts.Server.ID()
}

// requestHosts is the hosts handling at least one tracked request, each
// once.
func (t *Transport) requestHosts() []string {
	c := &t.requests
	c.mu.Lock()
	defer c.mu.Unlock()
	var hosts []string
	seen := make(map[string]bool)
	for _, r := range c.pending {
		for _, h := range r.hosts {
			if !seen[h] {
				seen[h] = true
				hosts = append(hosts, h)
			}
		}
	}
	return hosts
}

// forgetHost drops host from the known hosts and answers the requests it
// was handling, as lost for reason.
func (t *Transport) forgetHost(host, reason, msg string) {
	p := &t.presence
	p.mu.Lock()
	gone := t.dropPeersLocked(func(id string, _ HostInfo) bool { return id == host })
	p.mu.Unlock()
	if len(gone) > 0 {
		t.log.Warn(msg, "lost_host", host, "reason", reason)
	}
	t.hostLost(host, reason)
}
