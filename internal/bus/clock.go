package bus

import (
	"sync/atomic"
	"time"
)

// stampRebase is how often the stamping clock re-reads the wall clock.
const stampRebase = time.Second

// stampClock is the bus's default clock for envelope timestamps. time.Now
// reads two clocks, wall and monotonic (≈ 85 ns a publish on a KVM guest);
// time.Since on a base that carries a monotonic reading reads only the
// monotonic one. So a stamp is the base's wall time plus the monotonic time
// since the base, and the base is re-read from time.Now once a second: a
// step of the system's wall clock shows in stamps within a second, and a
// stamp never differs from time.Now by more than the clock's slew over that
// second. Stamps from one bus never go backwards within a base.
type stampClock struct {
	base atomic.Pointer[time.Time]
}

func newStampClock() *stampClock {
	c := &stampClock{}
	t := time.Now()
	c.base.Store(&t)
	return c
}

func (c *stampClock) now() time.Time {
	base := c.base.Load()
	if d := time.Since(*base); d < stampRebase {
		return base.Add(d)
	}
	t := time.Now()
	c.base.Store(&t)
	return t
}
