package natsbus

import (
	"fmt"
	"maps"
	"slices"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// receiver is the host's one receiving connection. It subscribes to the
// subjects of every attached capsule's [subscribe] keys, each subscription
// in the queue group named by the host id, and all of them feed one
// channel. The queue group makes the server deliver each message once per
// host however many of the host's subscriptions match it, and one
// connection read in order keeps each publisher's order: the host then
// delivers it to its routes and runs its interceptor chain exactly as for a
// local publish. Its broker permissions are the union of the attached
// capsules' subscribe grants, fixed when it connects; when a capsule brings
// a key outside them, a new receiver replaces it (see resubscribeLocked).
type receiver struct {
	conn *nats.Conn
	// closed is closed once conn is (a drain has finished).
	closed chan struct{}
	user   string
	grants map[string]bool
	subs   map[string]*nats.Subscription
}

// resubscribeLocked makes the receiver subscribe to exactly the wanted
// subjects, replacing it when they outgrow its permissions. t.mu must be
// held.
func (t *Transport) resubscribeLocked() error {
	if t.recv == nil || !t.recv.covers(t.wanted) {
		if len(t.wanted) == 0 {
			return nil
		}
		return t.replaceReceiverLocked()
	}
	r := t.recv
	for _, subject := range sortedKeys(t.wanted) {
		if r.subs[subject] != nil {
			continue
		}
		if err := t.subscribe(r, subject); err != nil {
			return err
		}
	}
	for subject, sub := range r.subs {
		if t.wanted[subject] == 0 {
			t.retireSubLocked(sub)
			delete(r.subs, subject)
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
func (t *Transport) replaceReceiverLocked() error {
	subjects := sortedKeys(t.wanted)
	user := "host:" + t.opts.HostID
	perms := &server.Permissions{
		Publish:   &server.SubjectPermission{Deny: []string{">"}},
		Subscribe: &server.SubjectPermission{Allow: subjects},
	}
	closed := make(chan struct{})
	conn, err := t.dial(user, perms, "receiver", nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
	if err != nil {
		return fmt.Errorf("receiver: %w", err)
	}
	r := &receiver{conn: conn, closed: closed, user: user, grants: make(map[string]bool, len(subjects)), subs: make(map[string]*nats.Subscription, len(subjects))}
	for _, s := range subjects {
		r.grants[s] = true
		if err := t.subscribe(r, s); err != nil {
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

func (t *Transport) subscribe(r *receiver, subject string) error {
	sub, err := r.conn.ChanQueueSubscribe(subject, t.opts.HostID, t.in)
	if err != nil {
		return fmt.Errorf("receive %s: %w", subject, err)
	}
	r.subs[subject] = sub
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
func (r *receiver) covers(wanted map[string]int) bool {
	for s := range wanted {
		if !r.grants[s] {
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
