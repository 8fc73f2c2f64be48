package egress

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A person may let a capsule reach a loopback or private address its grant
// names and the operator's allowlist does not; nothing else can be
// consented to, whatever the consent says, and the socket's last check lets
// through exactly what was consented.
func TestLocalConsent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	p := strconv.Itoa(port)
	res := newFakeResolver(map[string][]string{
		"model.local":  {"127.0.0.1"},
		"rebind.evil":  {"127.0.0.1", "169.254.169.254"},
		"metadata.aws": {"169.254.169.254"},
	})
	d, err := NewDialer(Options{Resolver: res, CheckConn: func(string, int) error { return nil }, Logger: quietLogger(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var asked atomic.Int32
	var askedFor atomic.Value
	yes := func(_ context.Context, target string, addrs []netip.Addr) error {
		asked.Add(1)
		askedFor.Store(target)
		return nil
	}
	no := func(context.Context, string, []netip.Addr) error {
		asked.Add(1)
		return errors.New("the person did not allow it")
	}
	for _, tc := range []struct {
		name    string
		addr    string
		consent LocalConsent
		ok      bool
		asks    int32
		want    string
	}{
		{"loopback, allowed", "127.0.0.1:" + p, yes, true, 1, ""},
		{"a name of loopback, allowed", "model.local:" + p, yes, true, 1, ""},
		{"loopback, refused", "127.0.0.1:" + p, no, false, 1, "the person did not allow it"},
		{"loopback, nobody to ask", "127.0.0.1:" + p, nil, false, 0, "loopback"},
		{"mapped loopback, allowed", "[::ffff:127.0.0.1]:" + p, yes, true, 1, ""},
		{"cloud metadata is never asked", "169.254.169.254:80", yes, false, 0, "link-local"},
		{"a name of cloud metadata is never asked", "metadata.aws:80", yes, false, 0, "link-local"},
		{"a name answering loopback and metadata", "rebind.evil:" + p, yes, false, 0, "link-local"},
		{"CGNAT is never asked", "100.64.0.1:80", yes, false, 0, "CGNAT"},
		{"NAT64 of loopback is never asked", "[64:ff9b::7f00:1]:" + p, yes, false, 0, "NAT64"},
		{"multicast is never asked", "224.0.0.1:80", yes, false, 0, "multicast"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked.Store(0)
			ctx := context.Background()
			if tc.consent != nil {
				ctx = WithLocalConsent(ctx, tc.consent)
			}
			c, err := d.DialContext(ctx, "tcp", tc.addr)
			if c != nil {
				_ = c.Close()
			}
			if tc.ok != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("dial %s: %v, want ok=%v (an error saying %q)", tc.addr, err, tc.ok, tc.want)
			}
			if err != nil && !errors.Is(err, ErrForbiddenAddress) {
				t.Fatalf("a refusal that is not ErrForbiddenAddress: %v", err)
			}
			if n := asked.Load(); n != tc.asks {
				t.Fatalf("asked %d times, want %d", n, tc.asks)
			}
		})
	}
	if got, _ := askedFor.Load().(string); got == "" || !strings.Contains(got, p) {
		t.Fatalf("the question named %q, want host:port", got)
	}
}

// The socket's last check lets through only the address and port the
// person consented to for that dial.
func TestConsentIsForOneAddressAndPort(t *testing.T) {
	g, err := newGuard(Options{Logger: quietLogger()}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ctx := withConsented(context.Background(), []netip.Addr{netip.MustParseAddr("127.0.0.1")}, 8080)
	for addr, ok := range map[string]bool{"127.0.0.1:8080": true, "127.0.0.1:8081": false, "127.0.0.2:8080": false, "10.0.0.1:8080": false} {
		if err := g.control(ctx, "tcp", addr, nil); (err == nil) != ok {
			t.Errorf("control %s after consent to 127.0.0.1:8080: %v, want ok=%v", addr, err, ok)
		}
	}
}
