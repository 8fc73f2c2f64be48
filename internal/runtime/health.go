package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/grants"
)

// HealthPolicy is how the health monitor restarts failed capsules
// (config.toml [health]).
type HealthPolicy struct {
	// MaxRestarts is how many restarts a failed capsule gets before the
	// monitor gives up on it; 0 turns the monitor off.
	MaxRestarts int
	// Backoff is the wait before the first restart; each further one
	// waits twice as long, up to MaxBackoff.
	Backoff, MaxBackoff time.Duration
}

// healthCheckEvery bounds how often the monitor looks: never more often
// than a backoff (no restart is due sooner), never less than once a second.
const healthCheckEvery = time.Second

// restarts is the monitor's record of one capsule.
type restarts struct {
	attempts int
	next     time.Time // when the next restart is due
	gaveUp   bool
	// healthySince is when it was last seen ready after a restart; a
	// capsule ready for a whole MaxBackoff has its count reset.
	healthySince time.Time
}

// WatchHealth starts the health monitor: every capsule that failed (its
// load, or an engine since) and may succeed on a second try is reloaded
// after p's backoff, at most p.MaxRestarts times in a row, each attempt
// and the final give-up logged and shown in List (Status.Restarts,
// Status.GaveUp, and the error). A capsule that is ready is never
// touched. A reload or load from outside (a changed directory, SIGHUP, an
// install) starts its count afresh. Close stops it.
func (r *Runtime) WatchHealth(p HealthPolicy) {
	if p.MaxRestarts <= 0 || p.Backoff <= 0 {
		return
	}
	p.MaxBackoff = max(p.MaxBackoff, p.Backoff)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	r.mu.Lock()
	if r.closed || r.healthStop != nil {
		r.mu.Unlock()
		stop()
		return
	}
	r.policy, r.healthStop, r.healthDone = p, stop, done
	r.mu.Unlock()
	go func() {
		defer close(done)
		t := time.NewTicker(min(p.Backoff, healthCheckEvery))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			r.checkHealth(ctx, time.Now())
		}
	}()
}

func (r *Runtime) stopHealth() {
	r.mu.Lock()
	stop, done := r.healthStop, r.healthDone
	r.healthStop, r.healthDone = nil, nil
	r.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// checkHealth restarts the capsules whose restart is due, one at a time.
func (r *Runtime) checkHealth(ctx context.Context, now time.Time) {
	for _, id := range r.due(now) {
		if ctx.Err() != nil {
			return
		}
		r.ops.Lock()
		err := r.reload(ctx, id) // publishes astrid.v1.capsules_loaded
		r.ops.Unlock()
		if err != nil {
			r.log.Warn("capsule restart failed", "capsule", id, "err", err)
		} else {
			r.log.Info("capsule restarted", "capsule", id)
		}
	}
}

// due updates the record of every capsule and returns those to restart
// now, each attempt counted and logged before it is made.
func (r *Runtime) due(now time.Time) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.policy
	var out []string
	for _, id := range r.order {
		e := r.entries[id]
		failure := failed(e)
		rs := r.restarts[id]
		if failure == nil {
			if rs != nil && !rs.gaveUp {
				if rs.healthySince.IsZero() {
					rs.healthySince = now
				} else if now.Sub(rs.healthySince) >= p.MaxBackoff {
					delete(r.restarts, id) // stable again: a later failure starts afresh
				}
			}
			continue
		}
		if !restartable(failure) {
			continue
		}
		if rs == nil {
			rs = &restarts{next: now.Add(p.Backoff)}
			r.restarts[id] = rs
			r.log.Warn("capsule failed; restarting", "capsule", id, "attempt", 1, "of", p.MaxRestarts, "in", p.Backoff, "err", failure)
			continue
		}
		rs.healthySince = time.Time{}
		if rs.gaveUp || now.Before(rs.next) {
			continue
		}
		if rs.attempts >= p.MaxRestarts {
			rs.gaveUp = true
			r.log.Error("capsule failed; gave up restarting it", "capsule", id, "restarts", rs.attempts, "err", failure)
			continue
		}
		rs.attempts++
		wait := min(p.Backoff<<min(rs.attempts, 30), p.MaxBackoff)
		rs.next = now.Add(wait)
		r.log.Warn("restarting failed capsule", "capsule", id, "attempt", rs.attempts, "of", p.MaxRestarts, "err", failure)
		out = append(out, id)
	}
	return out
}

// failed is why e is not serving ("nil" when it is, or is loading).
func failed(e *entry) error {
	switch {
	case e.loading:
		return nil
	case !e.loaded && e.err != nil:
		return e.err
	case e.loaded && e.comp != nil:
		if h := e.comp.Health(); h.State == capsule.Failed {
			if h.Err != nil {
				return h.Err
			}
			return errors.New("an engine failed")
		}
	}
	return nil
}

// restartable reports whether a second try may succeed: not for a capsule
// the operator has yet to approve or configure (only they can change that,
// and their change reloads it), nor for an engine that spent the same
// policy's restarts by itself (an MCP server's process, capsule.ErrGaveUp).
func restartable(err error) bool {
	return !errors.Is(err, grants.ErrNotApproved) && !errors.Is(err, grants.ErrWidened) && !errors.Is(err, ErrEnvMissing) && !errors.Is(err, capsule.ErrGaveUp)
}

// forgetRestarts starts capsule id's count afresh (a load or reload from
// outside the monitor).
func (r *Runtime) forgetRestarts(id string) {
	r.mu.Lock()
	delete(r.restarts, id)
	r.mu.Unlock()
}

// restartNote is what List shows of the monitor's record of id: the
// restarts made and, for a capsule still failed, what comes next. The
// caller holds r.mu.
func (r *Runtime) restartNote(id string, s *Status, now time.Time) {
	rs := r.restarts[id]
	if rs == nil {
		// An engine that gave up by itself says so in its error.
		s.GaveUp = s.State == capsule.Failed.String() && strings.Contains(s.Error, capsule.ErrGaveUp.Error())
		return
	}
	s.Restarts += rs.attempts
	s.GaveUp = rs.gaveUp
	if s.State != capsule.Failed.String() {
		return
	}
	switch {
	case rs.gaveUp || rs.attempts >= r.policy.MaxRestarts:
		s.Error = fmt.Sprintf("gave up after %d restarts: %s", rs.attempts, s.Error)
	default:
		in := max(rs.next.Sub(now), 0).Round(time.Millisecond)
		s.Error = fmt.Sprintf("restart %d of %d in %s: %s", rs.attempts+1, r.policy.MaxRestarts, in, s.Error)
	}
}
