package mcp

import (
	"context"
	"time"
)

// supervise watches the live generation of the load-time server and, when the server dies, starts
// a new one after a backoff that doubles while generations keep dying young
// (capped at MaxRestartBackoff) and starts over after a generation lived
// stableAfter. Calls in flight when a server dies fail at once (their
// context merges the generation's done context); calls that arrive while
// it is down are answered with an error, never held.
func (e *Engine) supervise(ctx context.Context, s *server, done chan<- struct{}) {
	defer close(done)
	backoff := e.opts.RestartBackoff
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
			backoff = e.opts.RestartBackoff
		}
		// A remote session the server expired (404 on its id) is opened
		// again at once: the server is there, it just forgot us.
		wait := backoff
		if s.cmd == nil && sessionExpired(s.exitErr) {
			wait = 0
		}
		for {
			e.log.Warn("mcp server is down; restarting", "exit", s.exitErr, "lived", lived.Round(time.Millisecond), "restart_in", wait)
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			if wait == backoff {
				backoff = min(2*backoff, MaxRestartBackoff)
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
			s = ns
			break
		}
	}
}
