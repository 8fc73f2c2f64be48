package main

import (
	"runtime/debug"
)

// daemonGCPercent is the daemon's garbage collection target (GOGC) unless
// the environment sets one: a daemon's heap is small when idle (≈ 5 MiB
// anonymous memory all told) and its turns allocate much short-lived JSON,
// so collecting half as often costs little memory and saves CPU on every
// turn (docs/rationale/daemon.md, "Why does the daemon collect garbage at
// GOGC=200?").
const daemonGCPercent = 200

// setDaemonGC applies daemonGCPercent unless GOGC is set, which wins as it
// does for any Go program.
func setDaemonGC(getenv func(string) string) {
	if getenv("GOGC") != "" {
		return
	}
	debug.SetGCPercent(daemonGCPercent)
}
