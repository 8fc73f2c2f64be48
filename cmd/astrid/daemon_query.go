package main

import (
	"encoding/json"
	"fmt"

	"github.com/astrid-go/astrid/capsules/uplink"
	"github.com/astrid-go/astrid/internal/daemon"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/uplinkwire"
)

// queryReporter answers the uplink's queries from rep: the uplink says who
// asks and what the socket counted; the daemon decides what that asker
// sees (internal/daemon, view.go).
func queryReporter(rep *daemon.Reporter) uplink.Reporter {
	return func(q uplink.Query) (json.RawMessage, error) {
		v := daemon.Viewer{Principal: q.Principal, Owner: q.Owner}
		var answer any
		var err error
		switch q.Name {
		case uplinkwire.QueryCapsules:
			answer, err = rep.Capsules(v)
		case uplinkwire.QueryStatus:
			socket := make(map[string]daemon.SocketTraffic, len(q.Socket))
			for p, t := range q.Socket {
				socket[p] = daemon.SocketTraffic{Clients: t.Clients, BytesIn: t.BytesIn, BytesOut: t.BytesOut}
			}
			answer, err = rep.Status(v, socket)
		case uplinkwire.QueryApprovals, uplinkwire.QueryRevokeApprovals:
			// The asker's own principal's, whoever asks: the owner's uid
			// too sees and withdraws only its principal's.
			var k *kernel.Kernel
			if k, err = rep.Kernel(); err == nil {
				answer, err = approvalQuery(k, q.Principal, q.Name, q.Args)
			}
		default:
			return nil, fmt.Errorf("no query %q", q.Name)
		}
		if err != nil {
			return nil, err
		}
		return json.Marshal(answer)
	}
}
