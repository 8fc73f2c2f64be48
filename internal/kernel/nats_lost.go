package kernel

import (
	"fmt"
	"log/slog"

	"github.com/astrid-go/astrid/internal/bus/natsbus"
	"github.com/astrid-go/astrid/ipc"
)

// requestLost answers a request whose host was lost before it answered
// (DESIGN §9): the handler was on the lost host, so no one can answer as
// it would; the dispatcher fails the request on its reply address
// (ipc.FailHostLost), once, as it does for a request it dropped itself,
// without knowing what the topic means (§4b). The requesting host's kernel
// alone can do this: the request waits in its dispatcher, and kernel
// events never cross hosts.
func (l *natsLink) requestLost(r natsbus.LostRequest) {
	d := l.d
	// The reason (ipc.FailHostLost) tells the requester that the work may
	// have been done there (ipc.FailureText says so); the message names the
	// host and how it was lost.
	msg := fmt.Sprintf("host %s, which was handling this request, was lost (%s)", r.Host, r.Reason)
	if !d.FailRequest(r.Request, ipc.FailHostLost, msg) {
		// Answered meanwhile (a reply crossed the loss) or past its
		// deadline: the requester has its answer already.
		l.log.Debug("kernel: a request whose host was lost was already answered",
			"topic", r.Request.Topic, "reply_to", r.Request.ReplyTo(), "lost_host", r.Host)
	}
}

// requestsAbandoned interrupts the calls this host runs for requests that
// host asker answered as lost (natsbus abandon.go): its requester has its
// answer, so the work only holds the capsule that runs it. A handler binds
// its request's correlation id as its cancel key (a tool call's id), and
// only calls of the request's principal are interrupted, as with any
// cancel. A key no call holds yet is remembered, so a copy of the request
// still queued here is cancelled as it starts.
func (l *natsLink) requestsAbandoned(asker string, reqs []natsbus.AbandonedRequest) {
	for _, r := range reqs {
		n := l.cancels.CancelFor(r.Principal, fmt.Errorf("cancelled: host %s answered this request as lost while this host ran it", asker), r.CorrelationID)
		l.log.Info("kernel: a request answered as lost elsewhere is cancelled here",
			slog.String("asker", asker), slog.String("correlation_id", r.CorrelationID), slog.Int("interrupted", n))
	}
}
