//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// withoutEcho runs read with the terminal tty not echoing what is typed
// (a secret), and restores the terminal's settings after, whatever read
// does. The line discipline stays canonical: the person edits and ends
// the line as usual.
func withoutEcho(tty *os.File, read func() (string, error)) (string, error) {
	fd := int(tty.Fd())
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return "", err
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	quiet.Lflag |= unix.ECHONL // the Enter still moves to the next line
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &quiet); err != nil {
		return "", err
	}
	defer func() { _ = unix.IoctlSetTermios(fd, ioctlSetTermios, old) }()
	return read()
}
