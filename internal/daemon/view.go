package daemon

import "github.com/astrid-go/astrid/internal/runtime"

// ScopePrincipal marks a Status cut down to one principal's view.
const ScopePrincipal = "principal"

// What a query shows is what its asker could learn anyway (docs/rationale/daemon.md,
// "What may a client of another uid learn from the daemon's status?"). The
// owner's uid can read run/status.json and the log: it sees everything.
// Another uid sees what using the daemon shows it already — the pid, the
// uptime, which capsules serve and their tools (a tool list says as much),
// and its own principal's turns, CPU, clients and bytes — and nothing of
// the owner's paths, of the errors (they name files and settings), or of
// the other principals and the bus, whose counters move with their work.

// capsulesFor is list as v may see it.
func capsulesFor(v Viewer, list []runtime.Status) []runtime.Status {
	if v.Owner {
		return list
	}
	out := make([]runtime.Status, len(list))
	for i, s := range list {
		s.Dir, s.Error = "", ""
		out[i] = s
	}
	return out
}

// statusFor is s as v may see it; ownTurns is v's principal's running
// turns.
func statusFor(v Viewer, s Status, ownTurns int) Status {
	if v.Owner {
		return s
	}
	own, seen := s.Principals[v.Principal]
	cut := Status{
		Pid: s.Pid, Started: s.Started, Updated: s.Updated, Scope: ScopePrincipal,
		Turns: ownTurns, Clients: own.Clients,
		Capsules:   capsulesFor(v, s.Capsules),
		Principals: map[string]PrincipalUsage{},
	}
	if seen {
		cut.Principals[v.Principal] = own
	}
	return cut
}
