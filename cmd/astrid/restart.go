package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/daemon"
)

func newRestartCmd() *cobra.Command {
	var ws string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "restart",
		Short: "Stop the Astrid daemon and start it again with the same arguments",
		Long: `Stops the daemon of $ASTRID_HOME as ` + "`astrid stop`" + ` does (running turns cancelled and
answered, capsules unloaded, the store closed), then starts it again in the background
with the arguments it was started with (its workspace, its --nats-* flags), and waits
until it serves, as ` + "`astrid start`" + ` does. A daemon that ran in the foreground comes back
detached. When no daemon runs, restart starts one (in the current directory, or
--workspace) and says so. Use it after changing config.toml: a reload (SIGHUP)
re-reads the capsules, not the configuration.

Exit status: 0 once the new daemon serves; 1 when the old one did not stop within
--timeout, or the new one did not start (the end of its output is shown).`,
		Example: `  astrid restart
  astrid restart --workspace ~/project   # the same daemon, another workspace`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, err := config.Home()
			if err != nil {
				return err
			}
			var args []string
			running := false
			pid, err := daemon.Running(home)
			// A daemon still booting has no pid file yet: wait for it.
			for deadline := time.Now().Add(timeout); err == nil && pid == 0 && time.Now().Before(deadline); {
				time.Sleep(pollInterval)
				pid, err = daemon.Running(home)
			}
			if err == nil {
				running = true
				if args, err = daemonArgs(pid); err != nil {
					return fmt.Errorf("restart: %w", err)
				}
				if _, err := stopDaemon(home, timeout); err != nil {
					return fmt.Errorf("restart: %w", err)
				}
			} else if !errors.Is(err, daemon.ErrNotRunning) {
				return err
			}
			if err := daemon.CheckHome(home); err != nil {
				return err
			}
			if args == nil || cmd.Flags().Changed("workspace") {
				if ws == "" {
					if ws, err = os.Getwd(); err != nil {
						return err
					}
				}
				args = withWorkspace(args, ws)
			}
			newPid, err := startDaemonArgs(home, args, timeout)
			if err != nil {
				return err
			}
			if running {
				fmt.Fprintf(cmd.OutOrStdout(), "astrid daemon restarted (pid %d)\n", newPid)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "astrid daemon was not running; started (pid %d)\n", newPid)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&ws, "workspace", "", "directory the tools work on (default: the running daemon's, else the current directory)")
	cmd.Flags().DurationVar(&timeout, "timeout", time.Minute, "how long to wait for the old daemon to stop, and again for the new one to serve")
	return cmd
}

// daemonArgs returns the arguments the daemon pid was started with
// (/proc/<pid>/cmdline without the program), always detached.
func daemonArgs(pid int) ([]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return nil, fmt.Errorf("the running daemon's arguments: %w", err)
	}
	var args []string
	for _, a := range bytes.Split(bytes.TrimSuffix(b, []byte{0}), []byte{0}) {
		args = append(args, string(a))
	}
	if len(args) < 2 || args[1] != "daemon" {
		return nil, fmt.Errorf("pid %d, which holds the daemon's lock, runs %q, not `astrid daemon`", pid, args)
	}
	args = args[1:]
	if !slices.Contains(args, "--detached") {
		args = slices.Insert(args, 1, "--detached")
	}
	return args, nil
}

// withWorkspace returns args (a daemon's, or none) with --workspace ws in
// place of any workspace they name.
func withWorkspace(args []string, ws string) []string {
	if args == nil {
		return []string{"daemon", "--detached", "--workspace", ws}
	}
	out := make([]string, 0, len(args)+2)
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--workspace" && i+1 < len(args):
			i++
		case len(a) > len("--workspace=") && a[:len("--workspace=")] == "--workspace=":
		default:
			out = append(out, a)
		}
	}
	return append(out, "--workspace", ws)
}
