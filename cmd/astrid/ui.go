package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/daemon"
)

func newUICmd() *cobra.Command {
	return &cobra.Command{
		Use:   "ui",
		Short: "Print the URL of the running daemon's web view",
		Long: `Prints the URL of the web view the daemon of $ASTRID_HOME serves on loopback: the
capsule graph (who may publish what to whom), the message flow per topic, the running
and recent agent turns with their tool calls, the drops with their reasons and each
capsule's grants (docs/webview.md). It opens nothing: paste the URL into a browser on
this machine.

The URL carries this run's token, which the page trades for a cookie at once; anyone
who has the URL can read the view until the daemon stops, so share it with nobody.
The server is configured in config.toml's [admin] (on by default, loopback only).

Exit status: 0 with the URL printed; 3 when no daemon runs; 1 when the daemon runs
without its web view.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, err := config.Home()
			if err != nil {
				return err
			}
			pid, err := daemon.Running(home)
			if errors.Is(err, daemon.ErrNotRunning) {
				fmt.Fprintf(cmd.ErrOrStderr(), "no daemon runs for %s: start one with `astrid start`, then run astrid ui again\n", home)
				return exitError{code: exitNotRunning}
			}
			if err != nil {
				return err
			}
			if pid == 0 {
				return fmt.Errorf("the daemon of %s is starting: run astrid ui again in a moment", home)
			}
			info, err := daemon.ReadAdmin(home)
			if err != nil || info.Pid != pid {
				return fmt.Errorf("the daemon (pid %d) serves no web view: [admin] enabled = false in %s/config.toml, or its server did not start (see %s)",
					pid, home, daemon.PathsOf(home).Log)
			}
			fmt.Fprintln(cmd.OutOrStdout(), info.TokenURL())
			return nil
		},
	}
}
