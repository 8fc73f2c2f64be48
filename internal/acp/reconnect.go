package acp

import (
	"context"
	"time"
)

// reconnectPatience bounds how long a session whose daemon went away
// waits for it to answer again (astrid restart takes about a second;
// a daemon started by hand, longer) before its request fails.
const reconnectPatience = 30 * time.Second

// lostGrace bounds how long a turn whose events stopped waits to learn
// whether the connection itself ended (the two are noticed apart).
const lostGrace = time.Second

// stopWait bounds how long a turn the daemon cancelled waits to learn
// whether the daemon is stopping: a graceful stop cancels the turns,
// waits for their answers, then unloads its capsules before the
// connection ends.
const stopWait = 5 * time.Second

// stoppedDaemon says whether the way to the kernel ends within stopWait.
func (r *run) stoppedDaemon() bool {
	if r.ws.Lost == nil {
		return false
	}
	select {
	case <-r.ws.Lost:
		return true
	case <-time.After(stopWait):
		return false
	}
}

// daemonGone says whether the turn's events stopped because the way to
// the kernel ended (the daemon stopped or restarted mid-turn).
func (r *run) daemonGone() bool {
	if r.ws.Lost == nil {
		return false
	}
	select {
	case <-r.ws.Lost:
		return true
	case <-time.After(lostGrace):
		return false
	}
}

// current is the workspace s works on, opened again when its way to the
// kernel was lost (the daemon restarted): the session itself lives in the
// daemon's store, so once reconnected its next turn goes on with its
// history, its workspace is recorded again and its commands are sent
// anew. The caller holds s's turn slot, so no turn of s uses the old one.
func (a *agent) current(ctx context.Context, s *session) (Workspace, error) {
	old := s.workspace()
	if !old.lost() {
		return old, nil
	}
	a.log.Warn("acp: the daemon went away; reconnecting", "session", s.id, "workspace", s.cwd)
	ctx, cancel := context.WithTimeout(ctx, reconnectPatience)
	defer cancel()
	wait := 50 * time.Millisecond
	s.mu.Lock()
	servers := s.servers
	s.mu.Unlock()
	s.releaseOwn() // the daemon that served its scope is gone
	for {
		ws, own, err := a.openSession(ctx, s.cwd, servers)
		if err == nil {
			s.mu.Lock()
			s.ws, s.recorded, s.own = ws, false, own
			s.mu.Unlock()
			a.log.Info("acp: reconnected", "session", s.id, "workspace", ws.Dir)
			a.loadCommands(s)
			return ws, nil
		}
		select {
		case <-ctx.Done():
			return Workspace{}, internal("the daemon went away and did not answer again within %s (astrid start runs it; astrid status shows it): %v", reconnectPatience, err)
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}
