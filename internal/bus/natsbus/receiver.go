package natsbus

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// receiver is the host's one receiving connection. It subscribes to the
// subjects of every attached capsule's [subscribe] keys in the queue group
// named by the host id, and to each capsule's interceptor patterns in the
// capsule's group (intercepts.go); all of them feed one channel. The host's
// group makes the server deliver each message once per host however many
// of its subscriptions match it, for its routes; a capsule's group, once
// among the hosts serving the capsule. One connection read in order keeps
// each publisher's order. Its broker permissions are the union of the
// attached capsules' subscribe grants, fixed when it connects; when a
// capsule brings a key outside them, a new receiver replaces it (see
// resubscribeLocked). It may publish nothing but the answer to a request
// it takes (inflight.go).
type receiver struct {
	conn *nats.Conn
	// closed is closed once conn is (a drain has finished).
	closed chan struct{}
	user   string
	grants map[string]bool
	subs   map[subKey]*nats.Subscription
}

// subKey is one subscription of the receiver: a subject in a queue group.
type subKey struct{ subject, queue string }

// wantedLocked is every subscription the host wants: its capsules' routes'
// and its interceptors'. t.mu must be held.
func (t *Transport) wantedLocked() map[subKey]int {
	wanted := t.interceptKeysLocked()
	maps.Copy(wanted, t.wanted)
	return wanted
}

// resubscribeLocked makes the receiver subscribe to exactly the wanted
// subjects, replacing it when they outgrow its permissions. t.mu must be
// held.
func (t *Transport) resubscribeLocked() error {
	wanted := t.wantedLocked()
	if t.recv == nil || !t.recv.covers(wanted) {
		if len(wanted) == 0 {
			return nil
		}
		return t.replaceReceiverLocked(wanted)
	}
	r := t.recv
	for _, k := range wantedKeys(wanted) {
		if r.subs[k] != nil {
			continue
		}
		if err := t.subscribe(r, k); err != nil {
			return err
		}
	}
	for k, sub := range r.subs {
		if wanted[k] == 0 {
			t.retireSubLocked(sub)
			delete(r.subs, k)
		}
	}
	if err := flushIfConnected(r.conn); err != nil {
		return fmt.Errorf("receive subscriptions: %w", err)
	}
	return nil
}

// replaceReceiverLocked connects a receiver allowed the wanted subjects,
// subscribes it, and only then retires the old one: both share the host's
// queue group meanwhile, so each message still reaches the host once. t.mu
// must be held.
func (t *Transport) replaceReceiverLocked(wanted map[subKey]int) error {
	keys := wantedKeys(wanted)
	var subjects []string
	for _, k := range keys {
		if !slices.Contains(subjects, k.subject) {
			subjects = append(subjects, k.subject)
		}
	}
	user := "host:" + t.opts.HostID
	perms := &server.Permissions{
		Publish:   &server.SubjectPermission{Deny: []string{">"}},
		Subscribe: &server.SubjectPermission{Allow: subjects},
		Response:  responseGrant(),
	}
	if t.recv != nil {
		// Both receivers share the queue groups until the old one has
		// drained, each handed part of a publisher's stream: the consumer
		// puts what arrives meanwhile back in publish order (handover.go).
		t.mark(handoverStart)
		defer t.mark(handoverEnd)
	}
	closed := make(chan struct{})
	conn, err := t.dial(user, perms, "receiver", nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
	if err != nil {
		return fmt.Errorf("receiver: %w", err)
	}
	r := &receiver{conn: conn, closed: closed, user: user, grants: make(map[string]bool, len(subjects)), subs: make(map[subKey]*nats.Subscription, len(keys))}
	for _, s := range subjects {
		r.grants[s] = true
	}
	for _, k := range keys {
		if err := t.subscribe(r, k); err != nil {
			conn.Close()
			return err
		}
	}
	// Flush makes the server register every subscription before the old
	// receiver leaves the queue group.
	if err := conn.Flush(); err != nil {
		conn.Close()
		return fmt.Errorf("receiver: %w", err)
	}
	if old := t.recv; old != nil {
		t.retireLocked(old)
	}
	t.recv = r
	return nil
}

func (t *Transport) subscribe(r *receiver, k subKey) error {
	sub, err := r.conn.ChanQueueSubscribe(k.subject, k.queue, t.in)
	if err != nil {
		return fmt.Errorf("receive %s in %s: %w", k.subject, k.queue, err)
	}
	r.subs[k] = sub
	return nil
}

// retireLocked drains r — what the server already sent it still reaches the
// channel — and waits until it is closed, so that once it returns no
// envelope can arrive through r any more. t.mu must be held.
func (t *Transport) retireLocked(r *receiver) {
	for _, sub := range r.subs {
		t.retireSubLocked(sub)
	}
	if err := r.conn.Drain(); err != nil {
		r.conn.Close()
	}
	<-r.closed
}

// retireSubLocked keeps the drop count of a subscription about to go and
// drains it. t.mu must be held.
func (t *Transport) retireSubLocked(sub *nats.Subscription) {
	if n, err := sub.Dropped(); err == nil && n > 0 {
		t.retiredDropped += uint64(n)
	}
	_ = sub.Drain()
}

// covers reports whether r's permissions allow every wanted subject.
func (r *receiver) covers(wanted map[subKey]int) bool {
	for k := range wanted {
		if !r.grants[k.subject] {
			return false
		}
	}
	return true
}

// dropped is the messages r's subscriptions dropped so far.
func (r *receiver) dropped() uint64 {
	var n uint64
	for _, sub := range r.subs {
		if d, err := sub.Dropped(); err == nil && d > 0 {
			n += uint64(d)
		}
	}
	return n
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// wantedKeys is the wanted subscriptions in a fixed order.
func wantedKeys(m map[subKey]int) []subKey {
	return slices.SortedFunc(maps.Keys(m), func(a, b subKey) int {
		if c := strings.Compare(a.subject, b.subject); c != 0 {
			return c
		}
		return strings.Compare(a.queue, b.queue)
	})
}
