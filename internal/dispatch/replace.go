package dispatch

import (
	"fmt"
	"maps"
	"time"
)

// replaceDrainPoll is how often a replaced capsule's queues are looked at
// while its last calls finish.
const replaceDrainPoll = 2 * time.Millisecond

// Replace swaps the registration of capsule a.ID for a new ACL and Target in
// one step: every publish from then on is matched against the new one, so
// no event finds the capsule missing. It returns retire, which lets the
// calls the old registration had queued or running finish on the old
// Target (up to Options.UnregisterGrace), then shuts it down as Unregister
// would. The caller runs retire once it no longer needs the commit it made
// the swap under; the old Target must keep serving until retire returns.
func (d *Dispatcher) Replace(a CapsuleACL, t Target) (retire func(), err error) {
	c, err := d.newCapsule(a, t)
	if err != nil {
		return nil, fmt.Errorf("dispatch: replace capsule %q: %w", a.ID, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed.Load() {
		c.cancel()
		return nil, fmt.Errorf("dispatch: replace capsule %q: %w", a.ID, ErrClosed)
	}
	current := *d.capsules.Load()
	old, ok := current[a.ID]
	if !ok {
		c.cancel()
		return nil, fmt.Errorf("dispatch: replace capsule %q: %w", a.ID, ErrUnknownCapsule)
	}
	if err := d.attach(a); err != nil {
		c.cancel()
		return nil, fmt.Errorf("dispatch: replace capsule %q: %w", a.ID, err)
	}
	next := maps.Clone(current)
	next[a.ID] = c
	d.publishRegistry(next)
	return func() {
		d.drain(old, d.opts.UnregisterGrace)
		d.shutdown(old)
	}, nil
}

// drain waits, up to limit, until c has no call queued or running.
func (d *Dispatcher) drain(c *capsule, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for !c.idle() && time.Now().Before(deadline) {
		time.Sleep(replaceDrainPoll)
	}
}

// idle reports whether c has no call queued or running.
func (c *capsule) idle() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, q := range c.queues {
		if q.n > 0 || q.inCall {
			return false
		}
	}
	return true
}
