package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/daemon"
)

// pollInterval is how often start and stop look at the daemon's lock and
// pid file while they wait.
const pollInterval = 20 * time.Millisecond

func newStartCmd() *cobra.Command {
	var ws string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Start the Astrid daemon in the background",
		Long: `Runs ` + "`astrid daemon`" + ` detached from the terminal (its own session; its output in
$ASTRID_HOME/logs/daemon.out, its log in daemon.log), waits until it serves, and
prints its pid.

Exit status: 0 once it serves; 1 when a daemon already runs for $ASTRID_HOME, or it
exited or was not ready within --timeout (then it is stopped, and the end of its
output shown).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, err := config.Home()
			if err != nil {
				return err
			}
			if pid, err := daemon.Running(home); err == nil {
				return &daemon.RunningError{Home: home, Pid: pid}
			}
			if err := daemon.CheckHome(home); err != nil {
				return err
			}
			if ws == "" {
				if ws, err = os.Getwd(); err != nil {
					return err
				}
			}
			pid, err := startDetached(home, ws, "", timeout)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "astrid daemon started (pid %d)\n", pid)
			return nil
		},
	}
	cmd.Flags().StringVar(&ws, "workspace", "", "directory the tools work on (default: the current directory)")
	cmd.Flags().DurationVar(&timeout, "timeout", time.Minute, "how long to wait for the daemon to serve")
	return cmd
}

// startDetached re-executes this binary as `astrid daemon --detached` in a
// session of its own and waits until it has written its pid file and its
// socket accepts a client (the uplink binds just after the kernel boots,
// so the pid file alone is not "ready"). startedBy names the command
// starting it by itself (--started-by: its idle timer); "" for astrid
// start.
func startDetached(home, ws, startedBy string, timeout time.Duration) (int, error) {
	args := []string{"daemon", "--detached", "--workspace", ws}
	if startedBy != "" {
		args = append(args, "--started-by", startedBy)
	}
	return startDaemonArgs(home, args, timeout)
}

// startDaemonArgs is startDetached with the daemon's whole argument list
// ("daemon", "--detached", ...): astrid restart passes the stopped
// daemon's own.
func startDaemonArgs(home string, args []string, timeout time.Duration) (int, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("start: %w", err)
	}
	p := daemon.PathsOf(home)
	out, err := os.OpenFile(p.Output, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, fmt.Errorf("start: %w", err)
	}
	defer out.Close() // the child has its own copy
	child := exec.Command(exe, args...)
	child.Env = append(os.Environ(), config.HomeEnv+"="+home)
	child.Stdout, child.Stderr = out, out
	child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := child.Start(); err != nil {
		return 0, fmt.Errorf("start: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			return 0, fmt.Errorf("the daemon exited while starting (%v):\n%s", err, tail(p.Output, 20))
		case <-deadline.C:
			_ = child.Process.Signal(syscall.SIGTERM)
			return 0, fmt.Errorf("the daemon was not ready within %s; stopped it. Its output:\n%s", timeout, tail(p.Output, 20))
		case <-tick.C:
			if pid, err := daemon.Running(home); err == nil && pid == child.Process.Pid && serves(home) {
				return pid, nil
			}
		}
	}
}

// tail returns the last n lines of a file (what a daemon that failed to
// start said).
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

func newStopCmd() *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "stop",
		Short: "Stop the Astrid daemon",
		Long: `Sends the daemon of $ASTRID_HOME SIGTERM and waits until it has shut down: running
turns cancelled and answered, capsules unloaded, the store closed.

Exit status: 0 once it has stopped; 1 when no daemon runs, or it did not stop within
--timeout.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, err := config.Home()
			if err != nil {
				return err
			}
			pid, err := stopDaemon(home, timeout)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "astrid daemon stopped (pid %d)\n", pid)
			return nil
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "how long to wait for the daemon to exit")
	return cmd
}

// stopDaemon signals the daemon of home and waits for its lock to be free.
func stopDaemon(home string, timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	pid, err := daemon.Running(home)
	// A daemon still booting has no pid file yet: wait for it.
	for err == nil && pid == 0 && time.Now().Before(deadline) {
		time.Sleep(pollInterval)
		pid, err = daemon.Running(home)
	}
	switch {
	case errors.Is(err, daemon.ErrNotRunning):
		return 0, fmt.Errorf("no daemon runs for %s", home)
	case err != nil:
		return 0, err
	case pid == 0:
		return 0, fmt.Errorf("the daemon of %s did not finish starting within %s", home, timeout)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return 0, fmt.Errorf("stop pid %d: %w", pid, err)
	}
	for time.Now().Before(deadline) {
		if _, err := daemon.Running(home); errors.Is(err, daemon.ErrNotRunning) {
			return pid, nil
		}
		time.Sleep(pollInterval)
	}
	return 0, fmt.Errorf("the daemon (pid %d) did not stop within %s; see %s", pid, timeout, daemon.PathsOf(home).Log)
}

// serves reports whether the daemon of home accepts a client on its socket
// (the handshake included).
func serves(home string) bool {
	c, err := dialDaemon(context.Background(), home)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
