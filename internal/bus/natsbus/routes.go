package natsbus

import (
	"slices"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// LostRoute says a host was taken as lost because this host's embedded
// node lost its last route to the host's node, which is therefore
// unreachable: the other process died (a SIGKILLed daemon sends no
// shutdown event) or the network between them broke.
const LostRoute = "the route to its NATS node closed"

// routePollInterval is how often a host that embeds a cluster node looks at
// the nodes its node has routes to. nats-server has no hook for a route
// closing and no system event for it; a look is one Routez, a few
// microseconds for a handful of routes.
const routePollInterval = 250 * time.Millisecond

// watchRoutes starts the goroutine that takes the hosts of a node as lost
// when this host's node loses its last route to it, and lets them back when
// a route to it opens again. nc is the nodes connection (watchNodes): the
// losses go through its subscription, after the shutdown events already
// received, so that a node that shut down is named as such.
func (t *Transport) watchRoutes(ns *server.Server, nc *nats.Conn) {
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		tick := time.NewTicker(routePollInterval)
		defer tick.Stop()
		up := routedNodes(ns)
		for {
			select {
			case <-t.done:
				return
			case <-tick.C:
			}
			now := routedNodes(ns)
			if now == nil || t.closing.Load() {
				// This host's own node is stopping: its routes
				// closing is its own loss (linkLost), no other's.
				continue
			}
			closed, opened := routeChanges(up, now)
			up = now
			if len(closed) > 0 {
				t.routesClosed(nc, closed)
			}
			if len(opened) > 0 {
				t.routesOpened(nc, opened)
			}
		}
	}()
}

// routedNodes is the ids of the nodes ns has at least one route to (with
// route pooling, a node has several), or nil if ns is not running.
func routedNodes(ns *server.Server) map[string]struct{} {
	rz, err := ns.Routez(nil)
	if err != nil || !ns.Running() {
		return nil
	}
	ids := make(map[string]struct{}, len(rz.Routes))
	for _, r := range rz.Routes {
		if r.RemoteID != "" {
			ids[r.RemoteID] = struct{}{}
		}
	}
	return ids
}

// routeChanges is the nodes routed to before and not now (closed), and
// those routed to now and not before (opened), each sorted.
func routeChanges(before, now map[string]struct{}) (closed, opened []string) {
	for id := range before {
		if _, ok := now[id]; !ok {
			closed = append(closed, id)
		}
	}
	for id := range now {
		if _, ok := before[id]; !ok {
			opened = append(opened, id)
		}
	}
	slices.Sort(closed)
	slices.Sort(opened)
	return closed, opened
}

// routesClosed takes the hosts of the nodes ids as lost. A node that shuts
// down sends its shutdown event before closing its routes, so the event is
// already on its way to nc: the flush makes nc read it, and the barrier
// runs after its handler, which names the loss a shutdown first.
func (t *Transport) routesClosed(nc *nats.Conn, ids []string) {
	if err := nc.Flush(); err != nil {
		t.log.Warn("natsbus: route loss not handled", "nodes", ids, "error", err)
		return
	}
	err := nc.Barrier(func() {
		for _, id := range ids {
			t.nodeGone(id, LostRoute, "natsbus: host lost: its NATS node's route closed")
		}
	})
	if err != nil {
		t.log.Warn("natsbus: route loss not handled", "nodes", ids, "error", err)
	}
}

// routesOpened lets the hosts of nodes ids be heard again: nodeGone
// ignores announcements from a lost node (they could be late ones, sent
// before it went), but a node routed to again is up, and what it announces
// now is true. The barrier orders this after an earlier route loss of the
// same node. Its hosts come back with their next announcement. This host
// announces itself at once: a host that took it as lost the same way hears
// a newcomer and answers with its own announcement.
func (t *Transport) routesOpened(nc *nats.Conn, ids []string) {
	err := nc.Barrier(func() {
		p := &t.presence
		p.mu.Lock()
		for _, id := range ids {
			delete(p.shutDown, id)
		}
		p.mu.Unlock()
		t.kickPresence()
	})
	if err != nil {
		t.log.Warn("natsbus: route back not handled", "nodes", ids, "error", err)
	}
}
