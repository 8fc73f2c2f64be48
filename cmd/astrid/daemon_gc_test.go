package main

import (
	"runtime/debug"
	"testing"
)

// The daemon collects at daemonGCPercent unless GOGC is set, which wins.
func TestDaemonGCPercent(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })

	setDaemonGC(func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != daemonGCPercent {
		t.Errorf("without GOGC: GC percent %d, want %d", got, daemonGCPercent)
	}
	setDaemonGC(func(k string) string {
		if k == "GOGC" {
			return "50"
		}
		return ""
	})
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set: GC percent changed to %d", got)
	}
}
