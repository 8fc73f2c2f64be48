//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

import (
	"errors"
	"os"
)

// withoutEcho cannot hide typing on this system: a secret is not asked
// for on a terminal that would show it.
func withoutEcho(*os.File, func() (string, error)) (string, error) {
	return "", errors.New("this system's terminal cannot hide what is typed")
}
