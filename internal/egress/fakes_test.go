package egress

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeResolver answers from a table and records every query. A host may have
// several successive answers (the last one repeats), which is how DNS
// rebinding is staged.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	calls   map[string]int
	queried []string
}

func newFakeResolver(answers map[string][]string) *fakeResolver {
	r := &fakeResolver{answers: map[string][][]netip.Addr{}, calls: map[string]int{}}
	for host, addrs := range answers {
		r.add(host, addrs...)
	}
	return r
}

// add appends one answer for host.
func (r *fakeResolver) add(host string, addrs ...string) {
	var answer []netip.Addr
	for _, a := range addrs {
		answer = append(answer, netip.MustParseAddr(a))
	}
	r.answers[host] = append(r.answers[host], answer)
}

func (r *fakeResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.queried = append(r.queried, host)
	seq, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	answer := seq[min(r.calls[host], len(seq)-1)]
	r.calls[host]++
	var out []netip.Addr
	for _, a := range answer {
		is4 := a.Unmap().Is4()
		if (network == "ip4" && !is4) || (network == "ip6" && is4) {
			continue
		}
		out = append(out, a)
	}
	return out, nil
}

func (r *fakeResolver) queries() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.queried)
}

// fakeNet is the injected final dialer. It records every address it is
// offered and sends nothing anywhere except loopback: a route maps a checked
// "ip:port" either to a real loopback listener or, when empty, to an
// in-memory pipe. Unrouted addresses fail without touching the network.
type fakeNet struct {
	mu     sync.Mutex
	routes map[string]string
	dialed []string
	// deadlines records whether each dial's context carried a deadline.
	deadlines []time.Time
}

func newFakeNet(t *testing.T, routes map[string]string) *fakeNet {
	t.Helper()
	for from, to := range routes {
		if to == "" {
			continue
		}
		ap, err := netip.ParseAddrPort(to)
		if err != nil || !ap.Addr().IsLoopback() {
			t.Fatalf("test bug: route %s -> %s must end on a loopback ip:port", from, to)
		}
	}
	return &fakeNet{routes: routes}
}

func (f *fakeNet) dial(ctx context.Context, network, address string) (net.Conn, error) {
	f.mu.Lock()
	f.dialed = append(f.dialed, address)
	dl, _ := ctx.Deadline()
	f.deadlines = append(f.deadlines, dl)
	target, ok := f.routes[address]
	f.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("fake network: %s %s unreachable", network, address)
	}
	if target == "" {
		client, server := net.Pipe()
		_ = server.Close()
		return client, nil
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", target)
}

func (f *fakeNet) addresses() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.dialed)
}

func allowAnyHost(string) error      { return nil }
func allowAnyConn(string, int) error { return nil }

// quietLogger keeps expected refusals out of the test output.
func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
