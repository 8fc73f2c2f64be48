package uplink

import (
	"context"
	"fmt"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/uplinkwire"
)

// The client table is bounded (Settings.MaxClients), and a full table of
// clients that said hello and then went quiet must not lock the daemon's
// owner out of their own daemon (docs/rationale/daemon.md, "What happens when
// the daemon's socket is full of idle clients?"):
//
//   - A few slots are the owner's: clients of other uids together hold at
//     most MaxClients - ownerReserve(MaxClients).
//   - At a full table a new client takes the slot of the client idle
//     longest (no request in flight, nothing read from it or written to it
//     for EvictIdle; EvictIdleSubscribed for one holding subscriptions,
//     which may be waiting for a turn's events), which is told so with an
//     `evicted` error frame and closed. A client of another uid may take
//     only another uid's slot; the owner's may take any.
//   - When no client is idle that long yet but one will be within
//     admitWait, the new client waits for it rather than being refused
//     at once; otherwise it is answered too_many_clients.

// admitWait bounds how long a new client waits at a full table for a
// connected one to become idle enough to give up its slot.
const admitWait = 2 * time.Second

// ownerReserve is how many of max slots only the owner's uid may take:
// one in sixteen, none below sixteen slots (a tiny table is the
// operator's explicit choice).
func ownerReserve(max int) int { return max / 16 }

// touch records activity on the client (a frame read or written): an
// active client is not evicted.
func (c *client) touch() { c.active.Store(time.Now().UnixNano()) }

// idleFor is how long the client has been quiet at now.
func (c *client) idleFor(now time.Time) time.Duration {
	return now.Sub(time.Unix(0, c.active.Load()))
}

// subscribed reports whether the client holds a subscription.
func (c *client) subscribed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.subs) > 0
}

// candidate is what eviction knows of one connected client.
type candidate struct {
	owner      bool          // its uid is the daemon owner's
	busy       bool          // a request of it is being answered
	subscribed bool          // it holds subscriptions
	idle       time.Duration // since its last frame either way
}

// pickVictim chooses, among cs, the client whose slot a new client takes:
// not busy, idle at least its threshold (minIdle, or minIdleSubscribed
// for a subscribed one), not the owner's unless the newcomer is the
// owner's; a client without subscriptions before one with, then the one
// idle longest. It returns its index, or -1 and how long until the first
// client would qualify (-1: none will by waiting alone, being busy or
// protected).
func pickVictim(cs []candidate, newcomerOwner bool, minIdle, minIdleSubscribed time.Duration) (victim int, wait time.Duration) {
	victim, wait = -1, -1
	for i, c := range cs {
		if c.busy || (c.owner && !newcomerOwner) {
			continue
		}
		need := minIdle
		if c.subscribed {
			need = minIdleSubscribed
		}
		if c.idle < need {
			if w := need - c.idle; wait < 0 || w < wait {
				wait = w
			}
			continue
		}
		if victim < 0 {
			victim = i
			continue
		}
		v := cs[victim]
		if (v.subscribed && !c.subscribed) || (v.subscribed == c.subscribed && c.idle > v.idle) {
			victim = i
		}
	}
	if victim >= 0 {
		wait = 0
	}
	return victim, wait
}

// admit enters c in the client table: at once when there is room for it,
// else in the slot of an idle client (evicted), waiting up to admitWait
// for one to become idle enough. False: the table stays full for c.
func (srv *server) admit(ctx context.Context, c *client) bool {
	c.touch()
	deadline := time.Now().Add(admitWait)
	for {
		srv.mu.Lock()
		full := len(srv.table) >= srv.s.MaxClients
		othersFull := !c.owner && srv.others >= srv.s.MaxClients-ownerReserve(srv.s.MaxClients)
		if !full && !othersFull {
			srv.enter(c)
			srv.mu.Unlock()
			return true
		}
		now := time.Now()
		// A client of another uid at the others' share takes another's
		// slot; the owner's, or anyone at a full table, any slot it may.
		members := make([]*client, 0, len(srv.table))
		cs := make([]candidate, 0, len(srv.table))
		for m := range srv.table {
			members = append(members, m)
			cs = append(cs, candidate{owner: m.owner, busy: m.busy.Load() > 0, subscribed: m.subscribed(), idle: m.idleFor(now)})
		}
		i, wait := pickVictim(cs, c.owner, srv.s.EvictIdle, srv.s.EvictIdleSubscribed)
		if i >= 0 {
			v := members[i]
			srv.remove(v)
			srv.enter(c)
			srv.wg.Add(1)
			srv.mu.Unlock()
			go srv.evict(v, cs[i].idle, c.principal)
			return true
		}
		changed := srv.changed
		srv.mu.Unlock()
		left := time.Until(deadline)
		if wait < 0 || wait > left {
			return false
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-changed: // a client left: there may be room
		case <-ctx.Done():
			t.Stop()
			return false
		}
		t.Stop()
	}
}

// enter and remove change the table; the caller holds srv.mu.
func (srv *server) enter(c *client) {
	srv.table[c] = struct{}{}
	if !c.owner {
		srv.others++
	}
	srv.counted()
}

func (srv *server) remove(c *client) bool {
	if _, ok := srv.table[c]; !ok {
		return false
	}
	delete(srv.table, c)
	if !c.owner {
		srv.others--
	}
	close(srv.changed)
	srv.changed = make(chan struct{})
	srv.counted()
	return true
}

// counted tells Settings.Clients the table's size; the caller holds
// srv.mu, so the counts arrive in order.
func (srv *server) counted() {
	if srv.s.Clients != nil {
		srv.s.Clients(len(srv.table))
	}
}

// leave takes c out of the table when it ends (an evicted client is out
// already).
func (srv *server) leave(c *client) {
	srv.mu.Lock()
	srv.remove(c)
	srv.mu.Unlock()
}

// evict tells v it gave its slot to a new client of principal and closes
// it; its own goroutines then tear it down. The caller holds a srv.wg
// slot for it.
func (srv *server) evict(v *client, idle time.Duration, principal string) {
	defer srv.wg.Done()
	idle = idle.Round(time.Millisecond)
	srv.h.Log(hostapi.LogWarn, fmt.Sprintf("uplink: evicted a client of %s idle for %s (no request in flight) for a new client of %s: the table of %d clients was full ([uplink] max_clients)", v.principal, idle, principal, srv.s.MaxClients))
	v.fatal(uplinkwire.Errorf(0, uplinkwire.CodeEvicted, "the daemon serves at most %d clients at once and this connection had been idle longest (%s): it was closed for a new client", srv.s.MaxClients, idle))
	_ = srv.h.NetClose(v.stream)
}
