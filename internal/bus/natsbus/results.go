package natsbus

import "github.com/astrid-go/astrid/ipc"

// replyRuns says which of this host's capsules intercept a reply published
// on another host, in place of the election's runs, and ends the tracking
// of the request it answers: the reply goes back to the host that
// published the request, where the requester waits. With the requester
// loaded on several hosts, the election picks one of them per envelope,
// and an election of the reply — another envelope, with its own seq —
// would pick any of them.
//
// So on the host that published the request (it is tracking it:
// inflight.go) every interceptor of the reply runs. On another host a
// capsule runs only if the election picks it and no other host serves it:
// then no other host can hold the request, and this host's capsule answers
// a reply it did not ask for as it would on one host, and the reply to a
// request beyond maxRemoteRequests, untracked, still reaches it. Route
// subscribers receive the reply everywhere as before. Any other envelope
// keeps runs.
//
// Without Options.RequestLost no request is tracked, and runs is kept.
func (t *Transport) replyRuns(e *ipc.Envelope, runs func(capsule string) bool) func(capsule string) bool {
	if t.opts.RequestLost == nil || !e.IsReply() {
		return runs
	}
	if t.endRequest(e) {
		return runEverywhere
	}
	return func(capsule string) bool { return runs(capsule) && t.servedOnlyHere(capsule) }
}

func runEverywhere(string) bool { return true }

// servedOnlyHere reports whether no other live host serves capsule.
func (t *Transport) servedOnlyHere(capsule string) bool {
	for _, h := range t.peers().hosts {
		if serves(h, capsule) {
			return false
		}
	}
	return true
}
