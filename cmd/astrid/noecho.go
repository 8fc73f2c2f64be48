//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// isTerminal reports whether f is a terminal: a device that answers the
// terminal-settings query. A character device is not enough: /dev/null is
// one, and a command run with stdin from it must not be taken for a
// person who can answer.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlGetTermios)
	return err == nil
}

// withoutEcho runs read with the terminal tty not echoing what is typed
// (a secret), and restores the terminal's settings after, whatever read
// does, an interrupt included. The line discipline stays canonical: the
// person edits and ends the line as usual. errNoEcho: tty is no terminal
// whose echo can be turned off.
func withoutEcho(tty *os.File, read func() (string, error)) (string, error) {
	fd := int(tty.Fd())
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return "", fmt.Errorf("%w: %w", errNoEcho, err)
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	quiet.Lflag |= unix.ECHONL // the Enter still moves to the next line
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &quiet); err != nil {
		return "", fmt.Errorf("%w: %w", errNoEcho, err)
	}
	restore := func() { _ = unix.IoctlSetTermios(fd, ioctlSetTermios, old) }
	// An interrupt while echo is off would leave the person's terminal
	// silent after the process ends.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		if _, interrupted := <-sig; interrupted {
			restore()
			os.Exit(130)
		}
	}()
	defer func() {
		signal.Stop(sig)
		close(sig)
		restore()
	}()
	return read()
}
