package mcp

import "sync"

// live holds the process group of every server this process has started and
// not yet torn down, so that KillAll can reach them all.
var live struct {
	mu     sync.Mutex
	groups map[int]string // pgid → "capsule/server", for the log
}

func trackGroup(pgid int, name string) {
	live.mu.Lock()
	defer live.mu.Unlock()
	if live.groups == nil {
		live.groups = map[int]string{}
	}
	live.groups[pgid] = name
}

func untrackGroup(pgid int) {
	live.mu.Lock()
	defer live.mu.Unlock()
	delete(live.groups, pgid)
}

// KillAll sends SIGKILL to the process group of every MCP server still
// running, and returns how many groups it signalled. It is meant for the
// last moments of astrid (a signal handler that will not wait for a
// graceful unload); the engines' own teardown still runs if it comes later.
// It never blocks on a server.
func KillAll() int {
	live.mu.Lock()
	pgids := make([]int, 0, len(live.groups))
	for pgid := range live.groups {
		pgids = append(pgids, pgid)
	}
	live.mu.Unlock()
	for _, pgid := range pgids {
		_ = signalGroup(pgid, sigKill)
	}
	return len(pgids)
}
