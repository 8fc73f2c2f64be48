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
	// Source is where Status came from: sourceSocket (asked live) or
	// sourceFile (run/status.json).
	Source string `json:"source,omitempty"`
	// WebView is the web view's address, without its token (astrid ui
	// prints it with); only its owner can read it.
	WebView string `json:"web_view,omitempty"`
	*daemon.Status
}

func newStatusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show whether the Astrid daemon runs, and what it runs",
		Long: `Shows the daemon of $ASTRID_HOME: pid, uptime, running agent turns, connected clients,
the web view's address (astrid ui prints it with its token), every capsule with its
state and last error (a reload that was refused says why), the
bus and dispatch counters (published, delivered, dropped by reason, evicted) and each
principal's CPU and socket bytes. It asks the daemon over its socket; when the socket
does not answer (or with --no-daemon) it reads the snapshot the daemon rewrites every
2 s ($ASTRID_HOME/run/status.json), which has no clients or bytes. A daemon shows a
uid other than its owner's only that principal's own figures.

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
				noDaemon, _ := cmd.Flags().GetBool(noDaemonFlag)
				if !noDaemon {
					rep.Status, rep.Source = liveStatus(cmd, home, pid)
				}
				if rep.Status == nil {
					if st, err := daemon.ReadStatus(home); err == nil && st.Pid == pid {
						rep.Status, rep.Source = &st, sourceFile
					}
				}
				if info, err := daemon.ReadAdmin(home); err == nil && info.Pid == pid {
					rep.WebView = info.BaseURL
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
	if s.Workspace != "" {
		fmt.Fprintf(w, "workspace: %s\n", s.Workspace)
	}
	if s.Sandbox != "" {
		fmt.Fprintf(w, "sandbox: %s\n", s.Sandbox)
	}
	if rep.WebView != "" {
		fmt.Fprintf(w, "web view: %s (astrid ui prints it with its token)\n", rep.WebView)
	}
	fmt.Fprintf(w, "turns running: %d\n", s.Turns)
	if rep.Source == sourceSocket {
		fmt.Fprintf(w, "clients: %d\n", s.Clients)
	}
	if s.Idle != nil {
		fmt.Fprintf(w, "idle exit: %s\n", idleLine(s.Idle, now))
	}
	fmt.Fprintf(w, "\ncapsules (%d):\n", len(s.Capsules))
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  ID\tSTATE\tENGINES\tERROR")
	for _, c := range s.Capsules {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", c.ID, c.State, strings.Join(c.Engines, ","), oneLine(c.Error, 200))
	}
	tw.Flush()
	if s.Bus == nil || s.Dispatch == nil {
		fmt.Fprintf(w, "\n(as principal %s: the bus, the dispatcher and other principals are shown to the daemon's owner only)\n", onlyPrincipal(s))
	} else {
		printCounters(w, s)
	}
	printPrincipals(w, s)
	if rep.Source == sourceSocket {
		printSocket(w, s)
	}
	printNATS(w, s.NATS)
	printFreshness(w, rep, now)
}

// printCounters prints the bus and dispatch counters.
func printCounters(w io.Writer, s *daemon.Status) {
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
}

// printPrincipals prints each principal's line of the CPU ledger, with
// the agent turns that ended since the daemon started, their tokens (in,
// of which cached, out) and their cost where the model is priced.
func printPrincipals(w io.Writer, s *daemon.Status) {
	if len(s.Principals) > 0 {
		fmt.Fprintf(w, "\nprincipals:\n")
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  PRINCIPAL\tCPU\tCALLS\tREFUSED\tTURNS\tTOKENS IN (CACHED)\tOUT\tCOST")
		for _, p := range slices.Sorted(maps.Keys(s.Principals)) {
			u := s.Principals[p]
			cost := "-"
			if u.CostUSD != nil {
				cost = fmt.Sprintf("$%.4f", *u.CostUSD)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t%d\t%d (%d)\t%d\t%s\n", p, time.Duration(u.CPUMicros)*time.Microsecond, u.Calls, u.Refused,
				u.Turns, u.InputTokens, u.CachedTokens, u.OutputTokens, cost)
		}
		tw.Flush()
	}
}

// idleLine describes the idle timer of a daemon a command started by
// itself ([daemon] idle_exit).
func idleLine(idle *daemon.Idle, now time.Time) string {
	line := fmt.Sprintf("stops after %s with no client connected and no turn running (started by astrid %s)", idle.ExitAfter, idle.StartedBy)
	if idle.Since == nil {
		return line + "; not idle now"
	}
	after, err := time.ParseDuration(idle.ExitAfter)
	idleFor := now.Sub(*idle.Since).Round(time.Second)
	if err != nil {
		return fmt.Sprintf("%s; idle for %s", line, idleFor)
	}
	return fmt.Sprintf("%s; idle for %s, stops in %s", line, idleFor, max(after-now.Sub(*idle.Since), 0).Round(time.Second))
}
