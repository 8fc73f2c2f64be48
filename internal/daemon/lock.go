package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// RunningError says that another daemon holds the home's lock.
type RunningError struct {
	Home string
	// Pid is the running daemon's, 0 when it has not written its pid file
	// yet (it is still booting).
	Pid int
}

func (e *RunningError) Error() string {
	if e.Pid == 0 {
		return fmt.Sprintf("a daemon is already starting for %s (its lock is held; no pid file yet)", e.Home)
	}
	return fmt.Sprintf("a daemon already runs for %s (pid %d); stop it with `astrid stop`", e.Home, e.Pid)
}

// ErrNotRunning is returned by Running when no daemon holds the lock.
var ErrNotRunning = errors.New("no daemon runs")

// lock is the held daemon lock.
type lock struct{ f *os.File }

// acquire takes the home's daemon lock without waiting, creating the run
// directory (0700) and the lock file. A lock already held is a
// *RunningError naming the holder's pid.
func acquire(home string, p Paths) (*lock, error) {
	if err := os.MkdirAll(p.Run, 0o700); err != nil {
		return nil, homeError(home, err)
	}
	// MkdirAll leaves an existing directory's mode alone.
	if err := os.Chmod(p.Run, 0o700); err != nil {
		return nil, homeError(home, err)
	}
	f, err := os.OpenFile(p.Lock, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, homeError(home, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			pid, _ := readPid(p.Pid)
			return nil, &RunningError{Home: home, Pid: pid}
		}
		return nil, fmt.Errorf("daemon: lock %s: %w", p.Lock, err)
	}
	return &lock{f: f}, nil
}

// release drops the lock (closing the file releases the flock).
func (l *lock) release() error { return l.f.Close() }

// Running reports the pid of the daemon running for home (0 while it is
// still booting), or ErrNotRunning when none holds the lock. It holds the
// lock, when free, only for the check.
func Running(home string) (int, error) {
	p := PathsOf(home)
	f, err := os.OpenFile(p.Lock, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, ErrNotRunning
	}
	if err != nil {
		return 0, fmt.Errorf("daemon: %w", err)
	}
	defer f.Close()
	switch err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); {
	case err == nil:
		return 0, ErrNotRunning // closing f releases it
	case errors.Is(err, unix.EWOULDBLOCK):
		pid, _ := readPid(p.Pid)
		return pid, nil
	default:
		return 0, fmt.Errorf("daemon: lock %s: %w", p.Lock, err)
	}
}

// cleanStale removes the run files a daemon killed without a shutdown left
// behind. The caller holds the lock, so none of them belongs to a live
// daemon.
func cleanStale(p Paths) []string {
	var removed []string
	for _, f := range []string{p.Pid, p.Socket, p.Status, p.Admin} {
		if err := os.Remove(f); err == nil {
			removed = append(removed, f)
		}
	}
	return removed
}

// readPid reads a pid file.
func readPid(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("daemon: pid file %s holds %q", path, b)
	}
	return pid, nil
}

// homeError explains a failure to write in the home, naming a read-only
// file system or missing permission as such.
func homeError(home string, err error) error {
	switch {
	case errors.Is(err, syscall.EROFS):
		return fmt.Errorf("daemon: $ASTRID_HOME %s is on a read-only file system; the daemon needs to write its lock, pid file, logs and state there (set ASTRID_HOME to a writable directory): %w", home, err)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("daemon: $ASTRID_HOME %s is not writable by this user; the daemon needs to write its lock, pid file, logs and state there: %w", home, err)
	}
	return fmt.Errorf("daemon: %w", err)
}

// CheckHome reports whether a daemon could keep its files in home: its run
// directory must be writable. The error names a read-only file system or a
// missing permission as such.
func CheckHome(home string) error {
	p := PathsOf(home)
	if err := os.MkdirAll(p.Run, 0o700); err != nil {
		return homeError(home, err)
	}
	f, err := os.CreateTemp(p.Run, ".probe-*")
	if err != nil {
		return homeError(home, err)
	}
	f.Close()
	return os.Remove(f.Name())
}
