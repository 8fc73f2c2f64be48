package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/astrid-go/astrid/internal/daemon"
)

// printNATS shows the hosts of a bus across hosts and the transport's
// counters; nothing when the bus stays on this host.
func printNATS(w io.Writer, n *daemon.NATSStatus) {
	if n == nil {
		return
	}
	fmt.Fprintf(w, "\nhosts (%d, this one: %s):\n", len(n.Hosts), n.Host)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  HOST\tCAPSULES")
	for _, h := range n.Hosts {
		fmt.Fprintf(tw, "  %s\t%s\n", h.ID, strings.Join(h.Capsules, ","))
	}
	tw.Flush()
	s := n.Stats
	fmt.Fprintf(w, "nats: forwarded %d, received %d, own echoes %d\n", s.Forwarded, s.Received, s.Echoes)
	if nd := s.Node; nd != nil {
		// Every refusal is someone without the cluster's secret (or
		// route certificate) or this process's credentials knocking.
		fmt.Fprintf(w, "nats node: routes joined %d, refused %d; clients refused %d; permissions violations %d\n",
			nd.RoutesJoined, nd.RoutesRefused, nd.ClientsRefused, nd.Violations)
	}
	if s.CredsRenewed > 0 || s.CredsExpired > 0 {
		fmt.Fprintf(w, "nats credentials: renewed %d, connections dropped as expired %d\n", s.CredsRenewed, s.CredsExpired)
	}
	if len(s.Drops) > 0 {
		fmt.Fprintf(w, "nats drops by reason:\n")
		for _, r := range slices.Sorted(maps.Keys(s.Drops)) {
			fmt.Fprintf(w, "  %6d  %s\n", s.Drops[r], r)
		}
	}
}
