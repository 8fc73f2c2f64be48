package clock

import (
	"sync/atomic"
	"time"
)

// Rebase is how often a Clock re-reads the wall clock.
const Rebase = time.Second

// Clock reads the time for less than time.Now. time.Now reads two clocks,
// wall and monotonic (≈ 60–85 ns on a KVM guest); time.Since on a base that
// carries a monotonic reading reads only the monotonic one. So Now is the
// base's wall time plus the monotonic time since the base, and the base is
// re-read from time.Now once a second: a step of the system's wall clock
// shows within a second, and a reading never differs from time.Now by more
// than the clock's slew over that second. Readings never go backwards
// within a base, and carry a monotonic reading, so Sub and Since between
// them are monotonic. A Clock is safe for concurrent use.
type Clock struct {
	base atomic.Pointer[base]
}

// base is a reading of time.Now and the same instant in Unix nanoseconds,
// so that UnixNano is one monotonic read and an addition.
type base struct {
	t        time.Time
	unixNano int64
}

// Process is a Clock for callers that need no base of their own: the
// engines time handler calls with it.
var Process = New()

// New returns a Clock based on time.Now.
func New() *Clock {
	c := &Clock{}
	c.rebase()
	return c
}

func (c *Clock) rebase() *base {
	t := time.Now()
	b := &base{t: t, unixNano: t.UnixNano()}
	c.base.Store(b)
	return b
}

// Now returns the current time.
func (c *Clock) Now() time.Time {
	b := c.base.Load()
	if d := time.Since(b.t); d < Rebase {
		return b.t.Add(d)
	}
	return c.rebase().t
}

// UnixNano returns the current time in nanoseconds since the Unix epoch:
// Now().UnixNano() without building a time.Time (the bus stamps every
// envelope with it).
func (c *Clock) UnixNano() int64 {
	b := c.base.Load()
	if d := time.Since(b.t); d < Rebase {
		return b.unixNano + int64(d)
	}
	return c.rebase().unixNano
}
