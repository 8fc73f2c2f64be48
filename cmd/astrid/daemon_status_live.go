package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/daemon"
	"github.com/astrid-go/astrid/internal/daemonclient"
	"github.com/astrid-go/astrid/internal/uplinkwire"
	"github.com/astrid-go/astrid/manifest"
)

// Where a status report came from (statusReport.Source).
const (
	sourceSocket = "socket"      // asked live over the daemon's socket
	sourceFile   = "status_file" // read from run/status.json
)

// liveStatusWait bounds the dial and the answer of a live status: a daemon
// that does not answer in that time is shown from its status file instead.
const liveStatusWait = 5 * time.Second

// liveStatus asks the daemon of home (running as pid) for its status over
// its socket; nil when the socket does not answer (a daemon still booting,
// wedged, or one this user may not connect to), and the caller reads the
// status file instead.
func liveStatus(cmd *cobra.Command, home string, pid int) (*daemon.Status, string) {
	ctx, cancel := context.WithTimeout(cmd.Context(), liveStatusWait)
	defer cancel()
	c, err := daemonclient.Dial(ctx, home, daemonclient.Options{Client: "astrid status " + manifest.RuntimeVersion, Timeout: liveStatusWait})
	if err != nil {
		return nil, ""
	}
	defer c.Close()
	var st daemon.Status
	if err := c.Query(uplinkwire.QueryStatus, &st); err != nil || st.Pid != pid {
		return nil, ""
	}
	return &st, sourceSocket
}

// onlyPrincipal is the one principal a principal's view shows, or "-".
func onlyPrincipal(s *daemon.Status) string {
	for p := range s.Principals {
		return p
	}
	return "-"
}

// printSocket prints each principal's clients and bytes on the socket
// (a live status only: the uplink counts them).
func printSocket(w io.Writer, s *daemon.Status) {
	if len(s.Principals) == 0 {
		return
	}
	fmt.Fprintf(w, "\nsocket:\n")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  PRINCIPAL\tCLIENTS\tBYTES IN\tBYTES OUT")
	for _, p := range slices.Sorted(maps.Keys(s.Principals)) {
		u := s.Principals[p]
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\n", p, u.Clients, u.BytesIn, u.BytesOut)
	}
	tw.Flush()
}

// printFreshness says how current the report is.
func printFreshness(w io.Writer, rep statusReport, now time.Time) {
	if rep.Source == sourceSocket {
		fmt.Fprintf(w, "\n(live, from the daemon's socket)\n")
		return
	}
	fmt.Fprintf(w, "\n(as of %s ago)\n", now.Sub(rep.Updated).Round(time.Second))
}
