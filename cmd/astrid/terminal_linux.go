package main

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// secret reads one line with echo off, so a secret typed at the terminal
// never shows. ok is false when echo cannot be turned off (then the
// caller reads it some other way). An interrupt while echo is off turns it
// back on before the process ends.
func (t *operatorTerminal) secret() (value string, ok bool, err error) {
	fd := int(t.in.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return "", false, nil
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &quiet); err != nil {
		return "", false, nil
	}
	restore := func() { _ = unix.IoctlSetTermios(fd, unix.TCSETS, old) }
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
		t.out.Write([]byte("\n")) // the newline the person typed did not echo
	}()
	value, err = t.line()
	return value, true, err
}
