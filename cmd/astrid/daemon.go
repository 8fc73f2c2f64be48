package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/daemon"
	"github.com/astrid-go/astrid/internal/kernel"
)

// daemonBuiltins are the daemon's capsules: the CLI uplink first (an
// uplink loads before every other capsule; it serves
// $ASTRID_HOME/run/astrid.sock, daemon.SocketPath, and answers its queries
// with rep), then the product's built-ins.
func daemonBuiltins(cfg config.Config, rep *daemon.Reporter) ([]kernel.Builtin, error) {
	up, err := uplinkBuiltin(cfg, rep)
	if err != nil {
		return nil, err
	}
	return append([]kernel.Builtin{up}, builtins()...), nil
}

func newDaemonCmd() *cobra.Command {
	var ws string
	var detached bool
	var startedBy string
	var nf natsFlags
	cmd := &cobra.Command{
		Use:   "daemon",
		Short: "Run the Astrid daemon in the foreground",
		Long: `Runs one kernel for $ASTRID_HOME until it is stopped: the built-in capsules and the
installed ones stay loaded, and clients reach it through $ASTRID_HOME/run/astrid.sock.
One daemon per home: a second one is refused, naming the running one's pid. Files a
killed daemon left in $ASTRID_HOME/run are cleaned at the next start.

The log goes to $ASTRID_HOME/logs/daemon.log (JSON lines, rotated at 10 MiB, three
kept) and, in the foreground, to the terminal as text. SIGTERM or Ctrl-C stops it:
running agent turns are cancelled and answered, capsules unloaded in reverse load
order, the store closed. SIGHUP reloads every installed capsule (a failed reload
keeps the running one); changes in $ASTRID_HOME/capsules are also picked up by
themselves. ` + "`astrid start`" + ` runs it in the background. A daemon ` + "`astrid chat`" + ` started by
itself stops after [daemon] idle_exit (config.toml; default never) with no client
connected and no turn running; one started on purpose never does. It collects garbage
at GOGC=200 (less CPU per turn for a little more memory) unless GOGC is set.

Exit status: 0 after a clean stop; 1 when it could not start (another daemon runs,
$ASTRID_HOME is not writable, a built-in capsule failed).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, err := config.Home()
			if err != nil {
				return err
			}
			cfg, err := config.Load(filepath.Join(home, "config.toml"))
			if err != nil {
				return err
			}
			nf.apply(cmd, &cfg)
			if err := cfg.NATS.Check(); err != nil {
				return err
			}
			if ws == "" {
				if ws, err = os.Getwd(); err != nil {
					return err
				}
			}
			setDaemonGC(os.Getenv)
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			reload := make(chan struct{}, 1)
			hup := make(chan os.Signal, 1)
			signal.Notify(hup, syscall.SIGHUP)
			defer signal.Stop(hup)
			go forwardReloads(ctx, hup, reload)
			rep := &daemon.Reporter{}
			bis, err := daemonBuiltins(cfg, rep)
			if err != nil {
				return err
			}
			opts := daemon.Options{
				Home: home, Workspace: ws, Config: cfg,
				Builtins:  bis,
				Frontends: frontends(), ConfigFallback: withHooks(configFallback(os.Getenv), cfg.Hooks),
				Reload: reload, Reporter: rep, WasmCache: wasmCache,
			}
			if !detached {
				opts.Console = cmd.ErrOrStderr()
			}
			switch startedBy {
			case "":
			case startedByChat:
				// Only a daemon a command started by itself may stop
				// for being idle.
				opts.StartedBy, opts.IdleExit = startedBy, cfg.Daemon.IdleExit.Duration
			default:
				return usage(cmd, fmt.Errorf("--started-by %q: only %q starts a daemon by itself", startedBy, startedByChat))
			}
			return daemon.Run(ctx, opts)
		},
	}
	cmd.Flags().StringVar(&ws, "workspace", "", "directory the tools work on (default: the current directory)")
	cmd.Flags().BoolVar(&detached, "detached", false, "log to the log file only (astrid start sets it)")
	_ = cmd.Flags().MarkHidden("detached")
	cmd.Flags().StringVar(&startedBy, "started-by", "", "the command that starts this daemon by itself (astrid chat sets it): [daemon] idle_exit applies")
	_ = cmd.Flags().MarkHidden("started-by")
	nf.register(cmd)
	return cmd
}

// forwardReloads turns each SIGHUP into one reload request; requests that
// arrive while one is pending are merged.
func forwardReloads(ctx context.Context, hup <-chan os.Signal, reload chan<- struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			select {
			case reload <- struct{}{}:
			default:
			}
		}
	}
}
