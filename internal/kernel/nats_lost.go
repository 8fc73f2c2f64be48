package kernel

import (
	"fmt"

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
