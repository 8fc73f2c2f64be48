package sandbox

import (
	"fmt"
	"os/exec"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// Start starts cmd confined by p and returns once it runs. release must be
// called after cmd.Wait returned: the OS thread that started the child
// waits until then, because the child's parent-death signal (Pdeathsig)
// follows the thread that forked it, not the process.
//
// The thread is locked and confined before cmd.Start and never unlocked,
// so the Go runtime ends it when its goroutine returns: nothing else ever
// runs on it, and the runtime starts no new threads from a locked one.
func Start(cmd *exec.Cmd, p Policy) (release func(), err error) {
	abi := landlockABI()
	if err := Need(abi); err != nil {
		return nil, err
	}
	rules, _, err := p.resolve()
	if err != nil {
		return nil, err
	}
	rfd, err := ruleset(abi, rules, p.ConnectTCP)
	if err != nil {
		return nil, err
	}
	prog := seccompProgram(len(p.ConnectTCP) > 0)
	started := make(chan error, 1)
	done := make(chan struct{})
	go onSpareThread(func() {
		// Locked by onSpareThread and deliberately never unlocked (see Start).
		err := confineThread(rfd, prog)
		unix.Close(rfd)
		if err == nil {
			err = cmd.Start()
		}
		started <- err
		if err == nil {
			<-done
		}
	})
	if err := <-started; err != nil {
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }, nil
}

// onSpareThread runs confine on an OS thread locked to it that is not the
// process's main thread. kill(2) on the process id checks the main
// thread's credentials: confined there, the Landlock domain would count
// as the process's, and a confined child could signal its parent, the
// daemon (the self-test's "signals a process outside its tree" once
// succeeded in CI, under load, when the goroutine happened to run on the
// main thread). Holding the main thread locked while another goroutine
// locks its own keeps that one off it.
func onSpareThread(confine func()) {
	runtime.LockOSThread()
	if unix.Gettid() != unix.Getpid() {
		confine()
		return
	}
	locked := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		close(locked)
		confine()
	}()
	<-locked
	runtime.UnlockOSThread()
}

// confineThread applies everything to the calling, locked thread.
func confineThread(rulesetFD int, prog []unix.SockFilter) error {
	if err := dropCapabilities(); err != nil {
		return err
	}
	if err := restrictThread(rulesetFD); err != nil {
		return err
	}
	return installSeccomp(prog)
}

// Need says why this kernel cannot confine a process, or nil.
func Need(abi int) error {
	switch {
	case abi == 0:
		return fmt.Errorf("sandbox: this kernel has no Landlock (Linux 5.13+ built with CONFIG_SECURITY_LANDLOCK and landlock in the lsm= list); processes cannot be confined: set [sandbox] mode = \"off\" in config.toml to run them unconfined")
	case abi < minABI:
		return fmt.Errorf("sandbox: this kernel's Landlock is ABI %d; confining processes needs ABI %d (Linux 6.12+: truncation, TCP and signal scoping): set [sandbox] mode = \"off\" in config.toml to run them unconfined", abi, minABI)
	case auditArch == 0:
		return fmt.Errorf("sandbox: no seccomp filter is written for %s; processes cannot be confined: set [sandbox] mode = \"off\" in config.toml to run them unconfined", runtime.GOARCH)
	}
	return nil
}
