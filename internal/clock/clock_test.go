package clock

import (
	"testing"
	"time"
)

// TestClockTracksTheWallClock: stamps stay within a millisecond of
// time.Now (the monotonic and wall clocks do not drift apart that fast), never
// go backwards, and carry the wall time a receiver serialises.
func TestClockTracksTheWallClock(t *testing.T) {
	c := New()
	prev := c.Now()
	for i := range 2000 {
		before := time.Now()
		got := c.Now()
		after := time.Now()
		if got.Before(before.Add(-time.Millisecond)) || got.After(after.Add(time.Millisecond)) {
			t.Fatalf("stamp %d: %v is not between %v and %v", i, got, before, after)
		}
		if got.Before(prev) {
			t.Fatalf("stamp %d went backwards: %v after %v", i, got, prev)
		}
		prev = got
		if i%500 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	if prev.Round(0).IsZero() {
		t.Fatal("stamp has no wall time")
	}
}

// TestClockRebases: once a base is a second old the next stamp comes
// from time.Now and becomes the new base.
func TestClockRebases(t *testing.T) {
	c := New()
	stale := func() *base {
		old := time.Now().Add(-2 * Rebase)
		b := &base{t: old, unixNano: old.UnixNano()}
		c.base.Store(b)
		return b
	}
	old := stale()
	before := time.Now()
	got := c.Now()
	if got.Before(before) {
		t.Fatalf("stamp %v from a stale base, want at least %v", got, before)
	}
	if c.base.Load() == old {
		t.Fatal("base was not replaced")
	}
	old = stale()
	before = time.Now()
	if got := c.UnixNano(); got < before.UnixNano() {
		t.Fatalf("UnixNano %d from a stale base, want at least %d", got, before.UnixNano())
	}
	if c.base.Load() == old {
		t.Fatal("base was not replaced by UnixNano")
	}
}

// TestUnixNanoAgreesWithNow: both readings come from the same base, so
// UnixNano lies between the Now readings around it, and never goes back.
func TestUnixNanoAgreesWithNow(t *testing.T) {
	c := New()
	prev := int64(0)
	for i := range 2000 {
		wallBefore := time.Now().UnixNano()
		before := c.Now().UnixNano()
		got := c.UnixNano()
		after := c.Now().UnixNano()
		wallAfter := time.Now().UnixNano()
		if got < before || got > after {
			t.Fatalf("reading %d: UnixNano %d is not between %d and %d", i, got, before, after)
		}
		if got < prev {
			t.Fatalf("reading %d went backwards: %d after %d", i, got, prev)
		}
		prev = got
		// Bracketed by wall readings, so that the test goroutine being
		// descheduled between two readings (CI, -race) is not drift.
		if got < wallBefore-int64(time.Millisecond) || got > wallAfter+int64(time.Millisecond) {
			t.Fatalf("reading %d: %d is more than a millisecond outside the wall clock's [%d, %d]", i, got, wallBefore, wallAfter)
		}
	}
}
