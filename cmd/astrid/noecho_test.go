//go:build linux

package main

import (
	"os"
	"path/filepath"
	"testing"
)

// Only a device that answers the terminal-settings query is a terminal:
// /dev/null is a character device, and a command run with stdin from it
// must not ask a person who is not there.
func TestIsTerminalOnlyForTerminals(t *testing.T) {
	open := func(path string, flag int) *os.File {
		f, err := os.OpenFile(path, flag, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, c := range map[string]struct {
		f    *os.File
		want bool
	}{
		"/dev/null":    {open(os.DevNull, os.O_RDONLY), false},
		"a pipe":       {r, false},
		"a file":       {open(filepath.Join(t.TempDir(), "f"), os.O_RDWR|os.O_CREATE), false},
		"a pty master": {open("/dev/ptmx", os.O_RDWR), true},
	} {
		if got := isTerminal(c.f); got != c.want {
			t.Errorf("isTerminal(%s) = %v, want %v", name, got, c.want)
		}
	}
	if _, err := withoutEcho(open(os.DevNull, os.O_RDONLY), func() (string, error) { return "read", nil }); err == nil {
		t.Error("withoutEcho read from /dev/null as if its echo were off")
	}
}
