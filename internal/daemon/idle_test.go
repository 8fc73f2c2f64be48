package daemon

import (
	"testing"
	"time"
)

// The idle clock runs from the last moment a client was connected or a
// turn ran, and not while either holds.
func TestIdleClock(t *testing.T) {
	ready := time.Now().Add(-time.Hour)
	rep := &Reporter{}
	tr := &turns{running: map[turnKey]bool{}}
	c := &idleClock{after: time.Minute, startedBy: "chat", ready: ready, rep: rep, turns: tr}
	if at, ok := c.since(); !ok || !at.Equal(ready) {
		t.Fatalf("untouched: %v, %v; want idle since ready", at, ok)
	}
	rep.Clients(1)
	if _, ok := c.since(); ok {
		t.Fatal("idle with a client connected")
	}
	if s := c.status(); s.Since != nil || s.ExitAfter != "1m0s" || s.StartedBy != "chat" {
		t.Fatalf("status with a client: %+v", s)
	}
	rep.Clients(0)
	left := rep.connected().at
	if at, ok := c.since(); !ok || !at.Equal(left) {
		t.Fatalf("after the client left: %v, %v; want %v", at, ok, left)
	}
	tr.mu.Lock()
	tr.running[turnKey{"default", "s-1", "t-1"}] = true
	tr.changed = time.Now()
	tr.mu.Unlock()
	if _, ok := c.since(); ok {
		t.Fatal("idle with a turn running")
	}
	tr.mu.Lock()
	clear(tr.running)
	ended := time.Now()
	tr.changed = ended
	tr.mu.Unlock()
	if at, ok := c.since(); !ok || !at.Equal(ended) {
		t.Fatalf("after the turn: %v, %v; want %v", at, ok, ended)
	}
	if p := (&idleClock{after: 30 * time.Minute}).poll(); p != time.Second {
		t.Fatalf("poll of 30m = %s", p)
	}
	if p := (&idleClock{after: 10 * time.Millisecond}).poll(); p != 5*time.Millisecond {
		t.Fatalf("poll of 10ms = %s", p)
	}
}
