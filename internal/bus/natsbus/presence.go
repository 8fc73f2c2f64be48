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

// PresencePrefix is the first token of the subjects hosts announce
// themselves on: presence.<host id>. No capsule grant reaches it (those all
// start with SubjectPrefix).
const PresencePrefix = "astrid_hosts"

// maxAnnouncedInterval bounds the interval another host may claim, so that
// a host cannot announce itself once and stay known for good.
const maxAnnouncedInterval = time.Minute

// DefaultPresenceInterval is how often a host announces itself; a host not
// heard of for three intervals is forgotten.
const DefaultPresenceInterval = 2 * time.Second

// HostInfo is one host of the bus as this host knows it.
type HostInfo struct {
	ID string `json:"id"`
	// Capsules are the ids of the capsules attached there, sorted.
	Capsules []string `json:"capsules"`
	// Intercepts maps each of those capsules to the patterns it
	// intercepts.
	Intercepts map[string][]string `json:"intercepts,omitempty"`
	// Server is the id of the embedded NATS node the host runs, if any:
	// that node's shutdown is the host's loss (nodes.go).
	Server string `json:"server,omitempty"`
	// Seen is when this host last heard of it (now, for itself).
	Seen time.Time `json:"seen"`
	// Interval is how often it announces itself (zero: as this host does).
	Interval time.Duration `json:"interval,omitempty"`
	// Probed says it answers liveness probes (probe.go).
	Probed bool `json:"probed,omitempty"`
}

// silentAfter is how long h may go unheard before it is forgotten: three
// of its own announcement intervals, or of own's when it did not say. A
// host announcing less often than this one is thus not forgotten between
// two of its announcements.
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
	Server     string              `json:"server,omitempty"`
	// IntervalMS is how often the host announces itself, in milliseconds.
	IntervalMS int64 `json:"interval_ms,omitempty"`
	// Probe says the host answers liveness probes.
	Probe bool `json:"probe,omitempty"`
	// Leaving says the host is closing its transport.
	Leaving bool `json:"leaving,omitempty"`
}

// presence tracks the other hosts' announcements. view is replaced, never
// changed, so that the publish and receive paths read it without a lock.
type presence struct {
	mu   sync.Mutex // serialises writers
	view atomic.Pointer[peerView]
	// shutDown holds the embedded nodes seen shutting down (mu held): an
	// announcement of a host on one of them was sent before it went, and
	// must not bring the host back (maxShutDown bounds it).
	shutDown map[string]struct{}
}

// maxShutDown bounds the shut-down nodes remembered; past it the oldest
// memory is simply cleared (an id never comes back: a node restarts with a
// new one).
const maxShutDown = 256

// peers is the other hosts this host knows of: those heard of, not yet
// forgotten (forgetSilent prunes the silent ones at each announcement
// tick), with what each serves. Elections and the requests tracked as handled
// elsewhere use it; it is the view each forwarded frame carries (view.go).
func (t *Transport) peers() *peerView {
	if v := t.presence.view.Load(); v != nil {
		return v
	}
	return &emptyView
}

// storePeers replaces the known hosts by next; those it drops are
// remembered as lost (peerView.gone). t.presence.mu must be held.
func (t *Transport) storePeers(next map[string]HostInfo) {
	t.presence.view.Store(t.peers().next(next))
}

// currentPeers is the hosts heard of within three presence intervals of now.
func (t *Transport) currentPeers(now time.Time) map[string]HostInfo {
	all := t.peers().hosts
	live := make(map[string]HostInfo, len(all))
	for id, h := range all {
		if now.Sub(h.Seen) <= h.silentAfter(t.opts.PresenceInterval) {
			live[id] = h
		}
	}
	return live
}

// dialPresence connects a presence connection, which may publish only
// this host's presence subject and subscribe only to the hosts' ones, and
// listens there.
func (t *Transport) dialPresence() (*nats.Conn, error) {
	publish, subscribe := presenceSubjects(t.opts.HostID)
	perms := &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: publish},
		Subscribe: &server.SubjectPermission{Allow: subscribe},
		Response:  &server.ResponsePermission{MaxMsgs: 1, Expires: time.Minute},
	}
	nc, err := t.dial("host:"+t.opts.HostID+":presence", perms, "presence", nats.DisconnectErrHandler(t.linkLost))
	if err != nil {
		return nil, fmt.Errorf("natsbus: presence: %w", err)
	}
	if _, err := nc.Subscribe(PresencePrefix+".*", t.heard); err != nil {
		nc.Close()
		return nil, fmt.Errorf("natsbus: presence: %w", err)
	}
	if err := t.subscribeProbes(nc); err != nil {
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
	if err := t.watchNodes(); err != nil {
		nc.Close()
		return fmt.Errorf("natsbus: presence: %w", err)
	}
	t.wg.Add(1)
	go t.announceEvery(t.opts.PresenceInterval)
	t.kickPresence()
	return nil
}

func (t *Transport) announceEvery(interval time.Duration) {
	defer t.wg.Done()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	probeTick := time.NewTicker(probeInterval)
	defer probeTick.Stop()
	ticks := 0
	for {
		select {
		case <-t.done:
			return
		case <-probeTick.C:
			t.probeRunners(t.presenceConn, ticks)
			continue
		case now := <-tick.C:
			ticks++
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
	return exactInterceptors(t.peers().hosts, topic)
}

func exactInterceptors(hosts map[string]HostInfo, topic string) []string {
	var ids []string
	for _, h := range hosts {
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
	a := announcement{Capsules: capsules, Intercepts: intercepts, Leaving: leaving, IntervalMS: t.opts.PresenceInterval.Milliseconds(), Probe: t.probing()}
	if t.opts.Server != nil {
		a.Server = t.opts.Server.ID()
	}
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
	p := &t.presence
	p.mu.Lock()
	if _, gone := p.shutDown[a.Server]; gone && a.Server != "" {
		p.mu.Unlock()
		return // sent before its node shut down, arriving late
	}
	next := maps.Clone(t.peers().hosts)
	if next == nil {
		next = make(map[string]HostInfo)
	}
	_, known := next[id]
	if a.Leaving {
		delete(next, id)
	} else {
		next[id] = HostInfo{ID: id, Capsules: a.Capsules, Intercepts: a.Intercepts, Server: a.Server, Seen: time.Now(),
			Interval: time.Duration(a.IntervalMS) * time.Millisecond, Probed: a.Probe}
	}
	t.storePeers(next)
	p.mu.Unlock()
	switch {
	case !known && !a.Leaving:
		// A newcomer missed our earlier announcements: answer at once
		// rather than at the next tick.
		t.kickPresence()
	case known && a.Leaving:
		t.hostLost(id, LostLeft)
	}
}

// dropPeersLocked removes the known hosts drop selects from the view and
// returns their ids; the view is replaced only when one is removed.
// t.presence.mu must be held.
func (t *Transport) dropPeersLocked(drop func(id string, h HostInfo) bool) []string {
	old := t.peers().hosts
	var gone []string
	next := make(map[string]HostInfo, len(old))
	for id, h := range old {
		if drop(id, h) {
			gone = append(gone, id)
		} else {
			next[id] = h
		}
	}
	if len(gone) > 0 {
		t.storePeers(next)
	}
	return gone
}

// forgetSilent forgets the hosts not heard of for three presence intervals
// and answers the requests they were handling.
func (t *Transport) forgetSilent(now time.Time) {
	p := &t.presence
	p.mu.Lock()
	silent := t.dropPeersLocked(func(_ string, h HostInfo) bool {
		return now.Sub(h.Seen) > h.silentAfter(t.opts.PresenceInterval)
	})
	p.mu.Unlock()
	for _, id := range silent {
		t.log.Warn("natsbus: host forgotten: not heard of for three presence intervals", "lost_host", id)
		t.hostLost(id, LostSilent)
	}
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

// Hosts lists this host and the hosts heard of within three presence
// intervals, by id, with the capsules each serves.
func (t *Transport) Hosts() []HostInfo {
	now := time.Now()
	hosts := []HostInfo{{ID: t.opts.HostID, Capsules: t.Capsules(), Seen: now}}
	for _, h := range t.currentPeers(now) {
		hosts = append(hosts, h)
	}
	slices.SortFunc(hosts, func(a, b HostInfo) int { return strings.Compare(a.ID, b.ID) })
	return hosts
}
