package natsbus

import (
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
)

// abandonedAt is a provider host whose abandoned requests are collected.
func abandonedAt(t *testing.T, id string, mk func(Options) *Transport) (*Transport, chan []AbandonedRequest, chan string) {
	t.Helper()
	got, askers := make(chan []AbandonedRequest, 16), make(chan string, 16)
	tr := mk(Options{HostID: id,
		Deliver: func(*ipc.Envelope, func(string) bool) error { return nil },
		RequestsAbandoned: func(asker string, reqs []AbandonedRequest) {
			askers <- asker
			got <- reqs
		},
	})
	must(t, tr.Attach("tool", []string{"tool.v1.execute.echo.result"}, []string{"tool.v1.execute.echo"}, []string{"tool.v1.execute.echo"}))
	return tr, got, askers
}

// TestARequestAnsweredAsLostIsAbandonedWhereItRuns: the requesting host
// takes host B as lost while B still runs its request (a partition looks
// the same from A); A answers the request and owes B an abandonment: the
// next liveness question B answers carries it, B's kernel is told
// (principal and correlation id, the asker named), and A owes nothing
// more. A request answered normally is never abandoned.
func TestARequestAnsweredAsLostIsAbandonedWhereItRuns(t *testing.T) {
	ns, auth := embedded(t)
	a, lost := callerHost(t, ns, auth, "hostA")
	_, abandoned, askers := abandonedAt(t, "hostB", func(o Options) *Transport {
		o.Server, o.Auth = ns, auth
		tr, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tr.Close)
		return tr
	})
	testutil.WaitFor(t, guard, "host A to hear host B's provider", func() bool { return hearsProvider(a, "hostB") })
	call(a, "kept", 1)
	call(a, "answered", 2)
	taken(t, a, 2)
	replied(a, "answered")

	// What A does when B's liveness subject goes silent, while B runs on.
	a.answerLost(LostGone, func(h string) bool { return h == "hostB" })
	checkLost(t, lostRequests(t, lost, 1)[0], "kept", "hostB", LostGone)

	reqs := testutil.WaitForRecv(t, guard, "host B to be told its request was abandoned", abandoned)
	if len(reqs) != 1 || reqs[0] != (AbandonedRequest{Principal: "alice", CorrelationID: "kept"}) {
		t.Fatalf("abandoned %+v, want only alice's request kept", reqs)
	}
	if asker := <-askers; asker != "hostA" {
		t.Fatalf("abandoned by %q, want hostA", asker)
	}
	testutil.WaitFor(t, guard, "host A to owe host B nothing once B answered", func() bool {
		a.requests.mu.Lock()
		defer a.requests.mu.Unlock()
		return len(a.requests.owed) == 0
	})
	// A question carrying nothing is not an abandonment.
	select {
	case reqs := <-abandoned:
		t.Fatalf("abandoned again: %+v", reqs)
	default:
	}
}

// TestAnAbandonmentWaitsForTheHostToReturn: a host that is gone when its
// requests are answered as lost is owed them until it answers again; while
// it does not, the questions asked for the debt answer nothing else as
// lost, and the debt is bounded in age and number.
func TestAnAbandonmentWaitsForTheHostToReturn(t *testing.T) {
	ns, auth := embedded(t)
	a, lost := callerHost(t, ns, auth, "hostA")
	b := providerHost(t, ns, auth, "hostB")
	testutil.WaitFor(t, guard, "host A to hear host B's provider", func() bool { return hearsProvider(a, "hostB") })
	call(a, "c1", 1)
	taken(t, a, 1)
	b.abandon()
	checkLost(t, lostRequests(t, lost, 1)[0], "c1", "hostB", LostGone)
	a.requests.mu.Lock()
	owedB := len(a.requests.owed["hostB"])
	a.requests.mu.Unlock()
	if owedB != 1 {
		t.Fatalf("host A owes host B %d abandonments, want 1", owedB)
	}
	// Gone answers to the debt's questions answer nothing more.
	for range 3 * aliveMisses {
		a.aliveAnswered("hostB", true)
	}
	select {
	case r := <-lost:
		t.Fatalf("a question asked only for the debt answered a request as lost: %+v", r)
	default:
	}

	// Returned under the same id: B's new transport is told.
	_, abandoned, _ := abandonedAt(t, "hostB", func(o Options) *Transport {
		o.Server, o.Auth = ns, auth
		tr, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tr.Close)
		return tr
	})
	reqs := testutil.WaitForRecv(t, guard, "the returned host B to be told", abandoned)
	if len(reqs) != 1 || reqs[0].CorrelationID != "c1" {
		t.Fatalf("abandoned %+v, want c1", reqs)
	}
}

func TestTheDebtIsBounded(t *testing.T) {
	var c inflight
	now := time.Now()
	for i := range maxOwed + 10 {
		c.oweLocked("hostB", AbandonedRequest{Principal: "p", CorrelationID: strings.Repeat("x", i%7+1)}, now)
	}
	if n := len(c.owed["hostB"]); n != maxOwed {
		t.Fatalf("%d owed, want the bound %d", n, maxOwed)
	}
	c.oweLocked("hostC", AbandonedRequest{Principal: "p", CorrelationID: "late"}, now.Add(owedFor+1))
	if len(c.owed["hostB"]) != 0 || len(c.owed["hostC"]) != 1 {
		t.Fatalf("expired debts kept: B %d, C %d", len(c.owed["hostB"]), len(c.owed["hostC"]))
	}
	c.oweLocked("", AbandonedRequest{CorrelationID: "x"}, now)
	c.oweLocked("hostD", AbandonedRequest{Principal: "p"}, now)
	if len(c.owed) != 1 {
		t.Fatalf("a debt with no host or no correlation id recorded: %v", c.owed)
	}
}

func TestDecodeAbandonedRefusesWhatItCannotTrust(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"not json", `{{`, "abandoned requests"},
		{"object", `{"principal":"a"}`, "abandoned requests"},
		{"no correlation", `[{"principal":"a"}]`, "no correlation id"},
		{"too many", "[" + strings.Repeat(`{"correlation_id":"x"},`, maxPerQuestion) + `{"correlation_id":"x"}]`, "over 64"},
		{"too big", `[{"correlation_id":"` + strings.Repeat("x", maxAbandonBytes) + `"}]`, "byte limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := DecodeAbandoned([]byte(tc.data)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("DecodeAbandoned(%.40q): %v, want an error saying %q", tc.data, err, tc.want)
			}
		})
	}
	reqs, err := DecodeAbandoned([]byte(`[{"principal":"alice","correlation_id":"c1"}]`))
	if err != nil || len(reqs) != 1 || reqs[0].Principal != "alice" {
		t.Fatalf("a good list: %+v, %v", reqs, err)
	}
}

func FuzzDecodeAbandoned(f *testing.F) {
	f.Add([]byte(`[{"principal":"alice","correlation_id":"c1"}]`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		reqs, err := DecodeAbandoned(data)
		if err != nil {
			return
		}
		if len(reqs) > maxPerQuestion {
			t.Fatalf("%d requests accepted, over the bound", len(reqs))
		}
		for _, r := range reqs {
			if r.CorrelationID == "" {
				t.Fatal("a request without a correlation id accepted")
			}
		}
	})
}
