package daemon

import (
	"time"
)

// Idle is the idle timer of a daemon a command started by itself
// (Options.StartedBy with Options.IdleExit): what `astrid status` shows of
// it.
type Idle struct {
	// StartedBy is the command that started the daemon ("chat").
	StartedBy string `json:"started_by"`
	// ExitAfter is [daemon] idle_exit, in Go syntax.
	ExitAfter string `json:"exit_after"`
	// Since is when the daemon last had a client connected or a turn
	// running; absent while it has one.
	Since *time.Time `json:"idle_since,omitempty"`
}

// clients counts the socket's clients as the uplink reports them
// (Reporter.Clients), and when the count last changed.
type clients struct {
	n  int
	at time.Time
}

// idleClock says since when the daemon has been idle: no client connected
// (as the uplink counts them) and no turn running (as the tracker sees
// them), from its readiness on.
type idleClock struct {
	after     time.Duration
	startedBy string
	ready     time.Time
	rep       *Reporter // nil: no socket counted
	turns     *turns
}

// since is when the daemon became idle; ok is false while it is not.
func (c *idleClock) since() (at time.Time, ok bool) {
	at = c.ready
	if c.rep != nil {
		n := c.rep.connected()
		if n.n > 0 {
			return time.Time{}, false
		}
		at = later(at, n.at)
	}
	running, changed := c.turns.activity()
	if running > 0 {
		return time.Time{}, false
	}
	return later(at, changed), true
}

// status is the timer as `astrid status` shows it.
func (c *idleClock) status() *Idle {
	s := &Idle{StartedBy: c.startedBy, ExitAfter: c.after.String()}
	if at, ok := c.since(); ok {
		at = at.UTC()
		s.Since = &at
	}
	return s
}

// poll is how often the daemon looks at its idle clock: a tenth of the
// idle time, within [5 ms, 1 s].
func (c *idleClock) poll() time.Duration {
	return min(max(c.after/10, 5*time.Millisecond), time.Second)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Clients tells the daemon how many clients its socket has now (the
// uplink's Settings.Clients): its idle timer counts them.
func (r *Reporter) Clients(n int) {
	r.mu.Lock()
	r.clients = clients{n: n, at: time.Now()}
	r.mu.Unlock()
}

func (r *Reporter) connected() clients {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.clients
}
