package natsbus

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Presence says what NATS cannot: which capsules, and which interceptors,
// each host serves — a tool's providers on other hosts
// (ExactInterceptors: describe, `tool list`'s HOST column). NATS itself
// distributes the envelopes (queue groups, intercepts.go) and tells a lost
// host (no responders, inflight.go); presence chooses no host and detects
// no loss.

// PresencePrefix is the first token of the subjects hosts announce
// themselves on: presence.<host id>. No capsule grant reaches it (those all
// start with SubjectPrefix).
const PresencePrefix = "astrid_hosts"

// maxAnnouncedInterval bounds the interval another host may claim, so that
// a host cannot announce itself once and stay listed for good.
const maxAnnouncedInterval = time.Minute

// DefaultPresenceInterval is how often a host announces itself; a host not
// heard of for three of its intervals is no longer listed.
const DefaultPresenceInterval = 2 * time.Second

// HostInfo is one host of the bus as this host knows it.
type HostInfo struct {
	ID string `json:"id"`
	// Capsules are the ids of the capsules attached there, sorted.
	Capsules []string `json:"capsules"`
	// Intercepts maps each of those capsules to the patterns it
	// intercepts.
	Intercepts map[string][]string `json:"intercepts,omitempty"`
	// Seen is when this host last heard of it (now, for itself).
	Seen time.Time `json:"seen"`
	// Interval is how often it announces itself (zero: as this host does).
	Interval time.Duration `json:"interval,omitempty"`
}

// silentAfter is how long h may go unheard before it is no longer listed:
// three of its own announcement intervals, or of own's when it did not say.
func (h HostInfo) silentAfter(own time.Duration) time.Duration {
	if h.Interval > 0 {
		return 3 * min(h.Interval, maxAnnouncedInterval)
	}
	return 3 * own
}

// announcement is what a host publishes on its presence subject.
type announcement struct {
	Capsules   []string            `json:"capsules"`
	Intercepts map[string][]string `json:"intercepts,omitempty"`
	// IntervalMS is how often the host announces itself, in milliseconds.
	IntervalMS int64 `json:"interval_ms,omitempty"`
	// Leaving says the host is closing its transport.
	Leaving bool `json:"leaving,omitempty"`
}

// presence holds the other hosts' announcements. hosts is replaced, never
// changed, so that readers take it without a lock.
type presence struct {
	mu    sync.Mutex // serialises writers
	hosts atomic.Pointer[map[string]HostInfo]
}

// peers is the other hosts heard of and not yet forgotten.
func (t *Transport) peers() map[string]HostInfo {
	if m := t.presence.hosts.Load(); m != nil {
		return *m
	}
	return nil
}

// updatePeers replaces the known hosts by what change makes of a copy.
func (t *Transport) updatePeers(change func(next map[string]HostInfo)) {
	p := &t.presence
	p.mu.Lock()
	defer p.mu.Unlock()
	next := maps.Clone(t.peers())
	if next == nil {
		next = make(map[string]HostInfo)
	}
	change(next)
	p.hosts.Store(&next)
}

// dialPresence connects a presence connection, which may publish only
// this host's presence subject and the hosts' liveness subjects, and
// subscribe only to the hosts' presence, its own liveness subject and its
// own inbox, and listens there.
func (t *Transport) dialPresence() (*nats.Conn, error) {
	publish, subscribe := presenceSubjects(t.opts.HostID)
	perms := &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: publish},
		Subscribe: &server.SubjectPermission{Allow: subscribe},
		Response:  responseGrant(),
	}
	nc, err := t.dial("host:"+t.opts.HostID+":presence", perms, "presence", nats.DisconnectErrHandler(t.linkLost))
	if err != nil {
		return nil, fmt.Errorf("natsbus: presence: %w", err)
	}
	for subject, handler := range map[string]nats.MsgHandler{
		PresencePrefix + ".*":           t.heard,
		aliveSubject(t.opts.HostID):     t.answerAlive,
		hostInbox(t.opts.HostID) + ".>": t.inboxed,
	} {
		if _, err := nc.Subscribe(subject, handler); err != nil {
			nc.Close()
			return nil, fmt.Errorf("natsbus: presence: %w", err)
		}
	}
	// Registered before the first request can name the inbox.
	if err := nc.Flush(); err != nil {
		nc.Close()
		return nil, fmt.Errorf("natsbus: presence: %w", err)
	}
	return nc, nil
}

// startPresence connects the presence connection and starts announcing.
// t.mu must not be held.
func (t *Transport) startPresence() error {
	nc, err := t.dialPresence()
	if err != nil {
		return err
	}
	t.presenceConn = nc
	t.wg.Add(1)
	go t.announceEvery(t.opts.PresenceInterval)
	t.kickPresence()
	return nil
}

func (t *Transport) announceEvery(interval time.Duration) {
	defer t.wg.Done()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	alive := time.NewTicker(aliveInterval)
	defer alive.Stop()
	for {
		select {
		case <-t.done:
			return
		case now := <-alive.C:
			t.answerOrphans(now)
			t.askAlive(t.presenceConn)
			continue
		case now := <-tick.C:
			t.forgetSilent(now)
			t.renewCreds(now)
		case <-t.presenceDue:
		}
		capsules, intercepts := t.attached()
		t.publishPresence(capsules, intercepts, false)
	}
}

// attached is the attached capsules' ids, sorted, and their interceptor
// patterns.
func (t *Transport) attached() ([]string, map[string][]string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	intercepts := make(map[string][]string)
	for id, a := range t.capsules {
		if len(a.intercepts) > 0 {
			intercepts[id] = a.intercepts
		}
	}
	return sortedKeys(t.capsules), intercepts
}

// ExactInterceptors is the ids of the capsules other hosts announce with an
// interceptor whose pattern is topic itself, sorted: a tool's providers
// there (dispatch.RemoteProviders).
func (t *Transport) ExactInterceptors(topic string) []string {
	var ids []string
	for _, h := range t.peers() {
		for id, patterns := range h.Intercepts {
			if slices.Contains(patterns, topic) && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	slices.Sort(ids)
	return ids
}

// kickPresence asks for an announcement now (the capsules changed).
func (t *Transport) kickPresence() {
	select {
	case t.presenceDue <- struct{}{}:
	default:
	}
}

// publishPresence announces capsules, or that the host is leaving.
func (t *Transport) publishPresence(capsules []string, intercepts map[string][]string, leaving bool) {
	a := announcement{Capsules: capsules, Intercepts: intercepts, Leaving: leaving, IntervalMS: t.opts.PresenceInterval.Milliseconds()}
	data, err := json.Marshal(a)
	if err == nil {
		err = t.presenceConn.Publish(PresencePrefix+"."+t.opts.HostID, data)
	}
	switch {
	case err != nil && t.closing.Load():
		// Closing: the announcing goroutine's last tick may find the
		// connection gone.
		t.log.Debug("natsbus: presence not announced while closing", "error", err)
	case err != nil:
		t.log.Warn("natsbus: presence not announced", "error", err)
	}
}

// heard records another host's announcement; the host is named by the
// subject, which only its own presence connection may publish on.
func (t *Transport) heard(m *nats.Msg) {
	id, ok := strings.CutPrefix(m.Subject, PresencePrefix+".")
	if !ok || id == t.opts.HostID {
		return
	}
	var a announcement
	if err := json.Unmarshal(m.Data, &a); err != nil {
		t.log.Warn("natsbus: unreadable presence announcement", "host", id, "error", err)
		return
	}
	slices.Sort(a.Capsules)
	known := false
	t.updatePeers(func(next map[string]HostInfo) {
		_, known = next[id]
		if a.Leaving {
			delete(next, id)
			return
		}
		next[id] = HostInfo{ID: id, Capsules: a.Capsules, Intercepts: a.Intercepts, Seen: time.Now(),
			Interval: time.Duration(a.IntervalMS) * time.Millisecond}
	})
	if !known && !a.Leaving {
		// A newcomer missed our earlier announcements: answer at once
		// rather than at the next tick.
		t.kickPresence()
	}
}

// forget stops listing host: it was lost (inflight.go).
func (t *Transport) forget(host string) {
	t.updatePeers(func(next map[string]HostInfo) { delete(next, host) })
}

// forgetSilent stops listing the hosts not heard of for three of their
// presence intervals.
func (t *Transport) forgetSilent(now time.Time) {
	t.updatePeers(func(next map[string]HostInfo) {
		maps.DeleteFunc(next, func(_ string, h HostInfo) bool {
			return now.Sub(h.Seen) > h.silentAfter(t.opts.PresenceInterval)
		})
	})
}

// linkLost answers every request handled on another host when this host's
// presence connection loses the cluster: no answer from anywhere can reach
// it now, and it cannot tell which host is still there. It logs as dial's
// handler would.
func (t *Transport) linkLost(nc *nats.Conn, err error) {
	if err != nil {
		t.log.Warn("natsbus: disconnected", "connection", nc.Opts.Name, "error", err)
	}
	if t.closing.Load() || nc == t.retiredPresence.Load() {
		return
	}
	t.answerLost(LostOwnLink, func(string) bool { return true })
}

// Hosts lists this host and the other hosts it heard of, by id, with the
// capsules each serves.
func (t *Transport) Hosts() []HostInfo {
	hosts := []HostInfo{{ID: t.opts.HostID, Capsules: t.Capsules(), Seen: time.Now()}}
	for _, h := range t.peers() {
		hosts = append(hosts, h)
	}
	slices.SortFunc(hosts, func(a, b HostInfo) int { return strings.Compare(a.ID, b.ID) })
	return hosts
}
