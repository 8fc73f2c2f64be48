package mcp

import (
	"context"
	"fmt"
	"time"

	"github.com/astrid-go/astrid/internal/capsule"
)

// supervise watches the live generation of the load-time server and, when the server dies, starts
// a new one after a backoff that doubles while generations keep dying young
// (capped at Options.MaxBackoff) and starts over after a generation lived
// stableAfter; after Options.MaxRestarts restarts in a row it gives up and
// the engine fails (capsule.ErrGaveUp). Calls in flight when a server dies fail at once (their
// context merges the generation's done context); calls that arrive while
// it is down are answered with an error, never held.
func (e *Engine) supervise(ctx context.Context, s *server, done chan<- struct{}) {
	defer close(done)
	backoff := e.opts.RestartBackoff
	inARow := 0 // restarts since a generation last lived stableAfter
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.exited:
		}
		lived := time.Since(s.started)
		e.mu.Lock()
		if e.cur == s {
			e.cur = nil
		}
		e.mu.Unlock()
		s.kill()
		if lived >= stableAfter {
			backoff, inARow = e.opts.RestartBackoff, 0
		}
		// A remote session the server expired (404 on its id) is opened
		// again at once: the server is there, it just forgot us.
		wait := backoff
		if s.cmd == nil && sessionExpired(s.exitErr) {
			wait = 0
		}
		for {
			if wait > 0 && e.opts.MaxRestarts != 0 && inARow >= max(e.opts.MaxRestarts, 0) {
				err := fmt.Errorf("mcp server %s died %d times in a row (last: %v): %w", e.srv.ID, inARow+1, s.exitErr, capsule.ErrGaveUp)
				e.log.Error("mcp server is down; gave up restarting it", "restarts", inARow, "exit", s.exitErr)
				e.set(capsule.Failed, err)
				return
			}
			if wait > 0 {
				inARow++
			}
			e.log.Warn("mcp server is down; restarting", "exit", s.exitErr, "lived", lived.Round(time.Millisecond), "restart_in", wait, "attempt", inARow, "of", e.opts.MaxRestarts)
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			if wait == backoff {
				backoff = min(2*backoff, e.opts.MaxBackoff)
			}
			wait = backoff
			ns, err := e.start(ctx, e.home())
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				e.log.Error("mcp server restart failed", "err", err)
				continue
			}
			e.mu.Lock()
			if e.stopping {
				e.mu.Unlock()
				ns.stop(stopGrace)
				return
			}
			e.cur = ns
			e.notifyCurLocked()
			e.restarts++
			n := e.restarts
			e.mu.Unlock()
			e.log.Info("mcp server restarted", "pid", ns.pid, "restarts", n)
			e.listChanged(ns.session) // its lists may differ now
			s = ns
			break
		}
	}
}
