package natsbus

import (
	"slices"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
)

func hostsSeenBy(h *Transport) map[string][]string {
	out := map[string][]string{}
	for _, x := range h.Hosts() {
		out[x.ID] = x.Capsules
	}
	return out
}

func TestHostsListEachOthersCapsules(t *testing.T) {
	ns, auth := startEmbedded(t, ServerOptions{Listen: "127.0.0.1:0"})
	mk := func(id string) *Transport {
		tr, err := New(Options{HostID: id, Server: ns, Auth: auth, PresenceInterval: 20 * time.Millisecond,
			Deliver: func(*ipc.Envelope, func(string) bool) error { return nil }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tr.Close)
		return tr
	}
	a, b := mk("hostA"), mk("hostB")
	must(t, a.Attach("react", []string{"x"}, nil, nil))
	must(t, a.Attach("fs", nil, []string{"y"}, nil))
	must(t, b.Attach("shell", nil, nil, nil))
	testutil.WaitFor(t, guard, "host B to hear host A's capsules", func() bool {
		return slices.Equal(hostsSeenBy(b)["hostA"], []string{"fs", "react"})
	})
	if got := hostsSeenBy(b)["hostB"]; !slices.Equal(got, []string{"shell"}) {
		t.Fatalf("host B lists itself with %q", got)
	}
	must(t, a.Attach("echo", nil, []string{"tool.v1.execute.*"}, []string{"tool.v1.execute.echo", "tool.v1.execute.*"}))
	testutil.WaitFor(t, guard, "host B to hear of host A's provider", func() bool {
		return slices.Equal(b.ExactInterceptors("tool.v1.execute.echo"), []string{"echo"})
	})
	if got := b.ExactInterceptors("tool.v1.execute.other"); len(got) != 0 {
		t.Fatalf("a wildcard interceptor counted as the provider of another tool: %q", got)
	}
	if got := a.ExactInterceptors("tool.v1.execute.echo"); len(got) != 0 {
		t.Fatalf("host A lists its own capsule as another host's: %q", got)
	}
	a.Detach("echo")
	a.Detach("fs")
	testutil.WaitFor(t, guard, "host B to hear fs left", func() bool { return slices.Equal(hostsSeenBy(b)["hostA"], []string{"react"}) })
	a.Close()
	testutil.WaitFor(t, guard, "host B to forget host A", func() bool { _, ok := hostsSeenBy(b)["hostA"]; return !ok })

	// A host's presence credentials announce only that host.
	auth.mu.RLock()
	secret := string(auth.users["host:hostB:presence"].secret)
	auth.mu.RUnlock()
	r, err := dialRogue(t, ns, "host:hostB:presence", secret)
	if err != nil {
		t.Fatal(err)
	}
	must(t, r.Publish(PresencePrefix+".hostZ", []byte(`{"capsules":["router"]}`)))
	must(t, r.Flush())
	testutil.WaitFor(t, guard, "the violation", func() bool { return r.violations() == 1 })
	if _, ok := hostsSeenBy(b)["hostZ"]; ok {
		t.Fatal("a forged host was listed")
	}
}

// TestAHostAnnouncingLessOftenIsNotForgotten: host A announces every 20 ms,
// host B every 400 ms. A keeps B for three of B's intervals, not three of
// its own: B stays listed between its announcements (it used to be
// forgotten 60 ms after each, and its running calls answered as lost).
func TestAHostAnnouncingLessOftenIsNotForgotten(t *testing.T) {
	ns, auth := startEmbedded(t, ServerOptions{Listen: "127.0.0.1:0"})
	mk := func(id string, every time.Duration) *Transport {
		tr, err := New(Options{HostID: id, Server: ns, Auth: auth, PresenceInterval: every,
			Deliver: func(*ipc.Envelope, func(string) bool) error { return nil }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tr.Close)
		return tr
	}
	a, b := mk("hostA", 20*time.Millisecond), mk("hostB", 400*time.Millisecond)
	must(t, b.Attach("shell", nil, nil, nil))
	testutil.WaitFor(t, guard, "host A to hear host B", func() bool { _, ok := hostsSeenBy(a)["hostB"]; return ok })
	// A negative, so only time shows it (the sleep is the thing under
	// test): a slow machine delays B's announcements, but forgetting B
	// takes three of its 400 ms intervals of silence.
	for range 150 { // 1.5 s: about four of B's announcements, 75 of A's ticks
		if _, ok := hostsSeenBy(a)["hostB"]; !ok {
			t.Fatal("host A forgot host B between two of B's announcements")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestAnAnnouncedIntervalIsBounded: a host claiming to announce itself
// once an hour is still forgotten after three minutes of silence; one that
// does not say is judged by this host's own interval.
func TestAnAnnouncedIntervalIsBounded(t *testing.T) {
	own := 2 * time.Second
	for _, tc := range []struct {
		claimed, want time.Duration
	}{
		{0, 6 * time.Second},
		{-time.Second, 6 * time.Second},
		{500 * time.Millisecond, 1500 * time.Millisecond},
		{time.Hour, 3 * maxAnnouncedInterval},
	} {
		if got := (HostInfo{Interval: tc.claimed}).silentAfter(own); got != tc.want {
			t.Errorf("claimed %v: forgotten after %v, want %v", tc.claimed, got, tc.want)
		}
	}
}
