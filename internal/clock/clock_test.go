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
	old := time.Now().Add(-2 * Rebase)
	c.base.Store(&old)
	before := time.Now()
	got := c.Now()
	if got.Before(before) {
		t.Fatalf("stamp %v from a stale base, want at least %v", got, before)
	}
	if b := c.base.Load(); b.Equal(old) {
		t.Fatal("base was not replaced")
	}
}
