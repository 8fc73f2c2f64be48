package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/daemon"
)

// exitNotRunning is astrid status's exit status when no daemon runs (LSB's
// "program is not running").
const exitNotRunning = 3

// statusReport is `astrid status --json`: whether a daemon runs and, when
// it does, its last status snapshot.
type statusReport struct {
	Running bool   `json:"running"`
	Home    string `json:"home"`
	Pid     int    `json:"pid,omitempty"`
	*daemon.Status
}

func newStatusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show whether the Astrid daemon runs, and what it runs",
		Long: `Shows the daemon of $ASTRID_HOME: pid, uptime, running agent turns, every capsule
with its state and last error (a reload that was refused says why), the bus and
dispatch counters (published, delivered, dropped by reason, evicted) and each
principal's CPU. It reads the snapshot the daemon rewrites every 2 s
($ASTRID_HOME/run/status.json).

Exit status: 0 when a daemon runs; 3 when none does.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, err := config.Home()
			if err != nil {
				return err
			}
			rep := statusReport{Home: home}
			pid, err := daemon.Running(home)
			switch {
			case errors.Is(err, daemon.ErrNotRunning):
			case err != nil:
				return err
			default:
				rep.Running, rep.Pid = true, pid
				if st, err := daemon.ReadStatus(home); err == nil && st.Pid == pid {
					rep.Status = &st
				}
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(rep); err != nil {
					return err
				}
			} else {
				printStatus(out, rep, time.Now())
			}
			if !rep.Running {
				return exitError{code: exitNotRunning}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status as JSON")
	return cmd
}

func printStatus(w io.Writer, rep statusReport, now time.Time) {
	if !rep.Running {
		fmt.Fprintf(w, "astrid daemon: not running (%s)\n", rep.Home)
		return
	}
	if rep.Status == nil {
		fmt.Fprintf(w, "astrid daemon: starting, pid %d (%s)\n", rep.Pid, rep.Home)
		return
	}
	s := rep.Status
	fmt.Fprintf(w, "astrid daemon: running, pid %d, up %s (%s)\n", s.Pid, now.Sub(s.Started).Round(time.Second), rep.Home)
	fmt.Fprintf(w, "workspace: %s\nturns running: %d\n", s.Workspace, s.Turns)
	fmt.Fprintf(w, "\ncapsules (%d):\n", len(s.Capsules))
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  ID\tSTATE\tENGINES\tERROR")
	for _, c := range s.Capsules {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", c.ID, c.State, strings.Join(c.Engines, ","), oneLine(c.Error, 200))
	}
	tw.Flush()
	b := s.Bus
	fmt.Fprintf(w, "\nbus: published %d, delivered %d, unrouted %d, evicted %d, dropped on close %d, lagged %d, too large %d, routes %d\n",
		b.Published, b.Delivered, b.Unrouted, b.Evicted, b.DroppedOnClose, b.Lagged, b.Rejected, b.Routes)
	d := s.Dispatch
	fmt.Fprintf(w, "dispatch: invocations %d, errors %d, queue drops %d (answered %d), discarded %d, orphaned %d, chains cut %d\n",
		d.Invocations, d.Errors, d.QueueDrops, d.DropsAnswered, d.Discarded, d.Orphaned, d.ChainsCut)
	fmt.Fprintf(w, "refused: publish denied %d, subscribe denied %d, rate limited %d, over CPU budget %d, too large %d, invalid %d\n",
		d.PublishDenied, d.SubscribeDenied, d.RateLimited, d.NotAdmitted, d.TooLarge, d.Invalid)
	if len(d.DenialsByReason) > 0 {
		fmt.Fprintf(w, "denials by reason:\n")
		for _, r := range slices.Sorted(maps.Keys(d.DenialsByReason)) {
			fmt.Fprintf(w, "  %6d  %s\n", d.DenialsByReason[r], oneLine(r, 120))
		}
	}
	if len(s.Principals) > 0 {
		fmt.Fprintf(w, "\nprincipals:\n")
		tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  PRINCIPAL\tCPU\tCALLS\tREFUSED")
		for _, p := range slices.Sorted(maps.Keys(s.Principals)) {
			u := s.Principals[p]
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\n", p, time.Duration(u.CPUMicros)*time.Microsecond, u.Calls, u.Refused)
		}
		tw.Flush()
	}
	printNATS(w, s.NATS)
	fmt.Fprintf(w, "\n(as of %s ago)\n", now.Sub(s.Updated).Round(time.Second))
}
