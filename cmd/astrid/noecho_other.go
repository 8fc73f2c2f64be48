//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

import (
	"os"
)

// isTerminal: a character device, the best this system's os package can
// tell without a terminal-settings query.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// withoutEcho cannot hide typing on this system: a secret is not asked
// for on a terminal that would show it.
func withoutEcho(*os.File, func() (string, error)) (string, error) {
	return "", errNoEcho
}
