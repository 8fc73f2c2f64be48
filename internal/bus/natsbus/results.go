package natsbus

import (
	"strings"

	"github.com/astrid-go/astrid/ipc"
)

// resultRuns says which of this host's capsules intercept a tool result
// published on another host (tool.v1.execute.<name>.result), in place of
// the election's runs: the result goes back to the host that published the
// call, where the router that forwarded it holds it (DESIGN §4: only the
// capsule the call was forwarded to may answer it, and only the router
// holding the call can tell). With the router loaded on several hosts, the
// election picks one of them per request, and an election of the result —
// another envelope, with its own seq — would pick any of them.
//
// So on the host that published the call (it is tracking it: inflight.go)
// every interceptor of the result runs. On another host a capsule runs only
// if the election picks it and no other host serves it: then no other host
// can hold the call, and this host's router answers a result it does not
// hold as it would on one host (it refuses it, and logs why), and a call
// beyond maxRemoteCalls, untracked, is still answered. Route subscribers
// receive the result everywhere as before. Any other envelope keeps runs.
//
// Without Options.CallLost no call is tracked, and runs is kept.
func (t *Transport) resultRuns(e *ipc.Envelope, runs func(capsule string) bool) func(capsule string) bool {
	if t.opts.CallLost == nil || !isToolResult(e.Topic) {
		return runs
	}
	if t.publishedCall(e.Principal, resultCallID(e.Payload)) {
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

// isToolResult reports whether topic is one tool's result topic,
// tool.v1.execute.<name>.result (not the router's consolidated
// tool.v1.execute.result).
func isToolResult(topic string) bool {
	name, ok := strings.CutPrefix(topic, "tool.v1.execute.")
	if !ok {
		return false
	}
	name, ok = strings.CutSuffix(name, ".result")
	return ok && name != "" && !strings.Contains(name, ".")
}

// publishedCall reports whether this host published call id for principal
// to a provider on another host and has not seen it answered.
func (t *Transport) publishedCall(principal, id string) bool {
	if id == "" {
		return false
	}
	t.calls.mu.Lock()
	defer t.calls.mu.Unlock()
	rc, ok := t.calls.calls[id]
	return ok && rc.principal == principal
}
