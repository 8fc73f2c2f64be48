package natsbus

import (
	"slices"
	"testing"

	"github.com/astrid-go/astrid/ipc"
)

// TestResultGoesToTheHostHoldingTheCall: a tool's result from another host
// is intercepted here by every interceptor while this host holds the call
// it answers (it published the call to another host and has not seen it
// consolidated; for the call's principal only); otherwise only by a capsule
// the election picks and no other host serves. Any other envelope keeps the
// election.
func TestResultGoesToTheHostHoldingTheCall(t *testing.T) {
	ns, auth := embedded(t)
	a, _ := callerHost(t, ns, auth, "hostA")
	providerHost(t, ns, auth, "hostB")
	waitFor(t, "host A to hear the provider", func() bool { return hearsProvider(a, "hostB") })
	call(a, "held", 1)

	result := func(topic, principal, id string) *ipc.Envelope {
		payload, _ := ipc.ToolExecuteResult{CallID: id, Result: ipc.ToolCallResult{CallID: id, Content: "x"}}.MarshalJSON()
		return &ipc.Envelope{Topic: topic, Payload: payload, SourceID: "tool", Principal: principal}
	}
	// The election picks "router" and "audit" here, not "other".
	elected := func(capsule string) bool { return capsule != "other" }
	type runsOf struct{ router, audit, other bool }
	check := func(name string, e *ipc.Envelope, want runsOf) {
		t.Helper()
		runs := a.resultRuns(e, elected)
		if got := (runsOf{runs("router"), runs("audit"), runs("other")}); got != want {
			t.Errorf("%s: runs %+v, want %+v", name, got, want)
		}
	}
	held := result("tool.v1.execute.echo.result", "alice", "held")
	notHeld := []struct {
		name string
		e    *ipc.Envelope
	}{
		{"another call's result", result("tool.v1.execute.echo.result", "alice", "other")},
		{"the held call's id for another principal", result("tool.v1.execute.echo.result", "bob", "held")},
		{"a result without a call id", result("tool.v1.execute.echo.result", "alice", "")},
	}
	kept := []struct {
		name string
		e    *ipc.Envelope
	}{
		{"the consolidated result", result(ipc.ToolExecuteResultTopic, "alice", "held")},
		{"a tool call", result("tool.v1.execute.echo", "alice", "held")},
		{"a deeper topic", result("tool.v1.execute.echo.x.result", "alice", "held")},
		{"another topic", result("mesh.result", "alice", "held")},
	}
	check("the held call's result", held, runsOf{true, true, true})
	for _, tc := range append(notHeld, kept...) {
		// No other host serves a router: this host's runs as elected.
		check(tc.name+", the router only here", tc.e, runsOf{true, true, false})
	}

	// Host C runs the router too: a result this host does not hold is
	// C's to take, whatever the election says here.
	callerHost(t, ns, auth, "hostC")
	waitFor(t, "host A to hear host C's router", func() bool {
		return slices.ContainsFunc(a.Hosts(), func(h HostInfo) bool { return h.ID == "hostC" && slices.Contains(h.Capsules, "router") })
	})
	check("the held call's result, a router on C too", held, runsOf{true, true, true})
	for _, tc := range notHeld {
		check(tc.name+", a router on C too", tc.e, runsOf{false, true, false})
	}
	for _, tc := range kept {
		check(tc.name+" keeps the election", tc.e, runsOf{true, true, false})
	}

	// Consolidated, the call is no longer held: a second result (a replay,
	// or the tool answering twice) is not the router's here.
	consolidated(a, "held")
	check("a result of a call already answered", held, runsOf{false, true, false})
}

// TestResultRunsWithoutCallTracking: a transport that tracks no calls (no
// CallLost) keeps the election for results too.
func TestResultRunsWithoutCallTracking(t *testing.T) {
	ns, auth := embedded(t)
	h := newTestHost(t, ns, auth, "hostA")
	payload, _ := ipc.ToolExecuteResult{CallID: "c"}.MarshalJSON()
	runs := h.resultRuns(&ipc.Envelope{Topic: "tool.v1.execute.echo.result", Payload: payload, Principal: "alice"}, func(string) bool { return true })
	if !runs("router") {
		t.Fatal("without call tracking a result does not keep the election")
	}
}
