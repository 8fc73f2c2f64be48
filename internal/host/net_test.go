package host

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/astrid-go/astrid/hostapi"
)

// fakeNet is the resolver and dialer a connect test injects: no query and
// no packet leaves the process, and every address offered to the dialer is
// recorded, so a test can assert a refused one never was.
type fakeNet struct {
	mu      sync.Mutex
	answers map[string][]netip.Addr
	dialled []string
}

func (f *fakeNet) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return a, nil
}

func (f *fakeNet) dial(_ context.Context, _, address string) (net.Conn, error) {
	f.mu.Lock()
	f.dialled = append(f.dialled, address)
	f.mu.Unlock()
	here, there := net.Pipe()
	go func() {
		// An echo server on the far end of the pipe.
		buf := make([]byte, 64)
		for {
			n, err := there.Read(buf)
			if err != nil {
				_ = there.Close()
				return
			}
			if _, err := there.Write(buf[:n]); err != nil {
				return
			}
		}
	}()
	return here, nil
}

const connectCapsule = `
[package]
name = "dialer"
version = "0.1.0"
[capabilities]
net_connect = ["public.test:443", "rebind.test:80", "loop.test:*", "127.0.0.1:*", "[::1]:*", "169.254.169.254:80", "db.test:5432"]
`

// Every way to reach an address the SSRF guard refuses is refused before
// any dial, even where net_connect grants the host; so are ports and hosts
// net_connect does not grant. Only the public name reaches the dialer.
func TestNetConnectEscapes(t *testing.T) {
	fn := &fakeNet{answers: map[string][]netip.Addr{
		"public.test": {netip.MustParseAddr("93.184.216.34")},
		"rebind.test": {netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("127.0.0.1")},
		"loop.test":   {netip.MustParseAddr("127.0.0.1")},
		"db.test":     {netip.MustParseAddr("10.0.0.5")},
	}}
	f := newFixture(t)
	f.deps.Egress.Resolver = fn
	f.deps.Egress.Dial = fn.dial
	c := f.capsule(t, connectCapsule)
	defer c.Close()
	call, _ := c.Begin(context.Background(), "alice")
	defer call.End()

	cases := []struct {
		name string
		host string
		port int
		code hostapi.Code
		text string
	}{
		{"loopback literal, granted", "127.0.0.1", 22, hostapi.CodeDenied, "forbidden address"},
		{"metadata address, granted", "169.254.169.254", 80, hostapi.CodeDenied, "forbidden address"},
		{"ipv6 loopback, granted", "::1", 22, hostapi.CodeDenied, "forbidden address"},
		{"ipv6 loopback bracketed", "[::1]", 22, hostapi.CodeDenied, "forbidden address"},
		{"decimal loopback", "2130706433", 22, hostapi.CodeDenied, "forbidden address"},
		{"hex loopback", "0x7f.1", 22, hostapi.CodeDenied, "forbidden address"},
		{"name resolving to loopback, granted by name", "loop.test", 80, hostapi.CodeDenied, "forbidden address"},
		{"name with one loopback answer among public ones", "rebind.test", 80, hostapi.CodeDenied, "forbidden address"},
		{"name resolving to a private address", "db.test", 5432, hostapi.CodeDenied, "forbidden address"},
		{"port not granted", "public.test", 80, hostapi.CodeDenied, "net_connect"},
		{"host not granted", "evil.test", 443, hostapi.CodeDenied, "net_connect"},
		{"case does not matter, the port does", "PUBLIC.test", 444, hostapi.CodeDenied, "net_connect"},
		{"port 0", "public.test", 0, hostapi.CodeInvalid, "port"},
		{"port too large", "public.test", 65536, hostapi.CodeInvalid, "port"},
		{"NUL in host", "public.test\x00.evil", 443, hostapi.CodeInvalid, ""},
		{"empty host", "", 443, hostapi.CodeInvalid, ""},
		{"userinfo", "user@public.test", 443, hostapi.CodeInvalid, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := call.NetConnect(tc.host, tc.port)
			if hostapi.CodeOf(err) != tc.code || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("got %v, want %v containing %q", err, tc.code, tc.text)
			}
		})
	}
	if len(fn.dialled) != 0 {
		t.Fatalf("refused connects reached the dialer: %v", fn.dialled)
	}
	if n := c.nets.Len(); n != 0 {
		t.Fatalf("refused connects left %d handles", n)
	}

	h, err := call.NetConnect("Public.Test", 443)
	if err != nil {
		t.Fatal(err)
	}
	if len(fn.dialled) != 1 || fn.dialled[0] != "93.184.216.34:443" {
		t.Fatalf("dialled %v, want the one checked address", fn.dialled)
	}
	if err := call.NetWrite(h, []byte("ping")); err != nil {
		t.Fatal(err)
	}
	if b, err := call.NetRead(h, 1<<40, 0); err != nil || string(b) != "ping" {
		t.Fatalf("read with a huge max: %q %v", b, err)
	}
	if err := call.NetClose(h); err != nil {
		t.Fatal(err)
	}
}

const loopbackPair = `
[package]
name = "listener"
version = "0.1.0"
[capabilities]
net_bind = ["127.0.0.1:*", "localhost:0"]
net_connect = ["127.0.0.1:*"]
`

// A capsule binds loopback TCP, another connects to it (the operator
// allowlisted loopback), and the stream carries bytes both ways; handles
// outlive the call that opened them; a read on a peer that never sends
// times out and leaves the stream usable; the peer's close reads as closed.
func TestNetLoopbackStream(t *testing.T) {
	f := newFixture(t)
	f.deps.Egress.AllowLocal = []string{"127.0.0.1/32"}
	c := f.capsule(t, loopbackPair)
	defer c.Close()

	open, _ := c.Begin(context.Background(), "default")
	ln, err := open.NetBind("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	open.End()
	host, port, _ := net.SplitHostPort(ln.Addr)
	if host != "127.0.0.1" || port == "0" {
		t.Fatalf("bound %q", ln.Addr)
	}
	p, _ := strconv.Atoi(port)

	call, _ := c.Begin(context.Background(), "default")
	defer call.End()
	client, err := call.NetConnect("127.0.0.1", p)
	if err != nil {
		t.Fatal(err)
	}
	acc, err := call.NetAccept(ln.Handle, 0)
	if err != nil {
		t.Fatal(err)
	}
	if acc.Peer.Addr == "" || !strings.HasPrefix(acc.Peer.Addr, "127.0.0.1:") || acc.Peer.UID != -1 {
		t.Fatalf("peer %+v", acc.Peer)
	}
	if err := call.NetWrite(client, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if b, err := call.NetRead(acc.Handle, 3, 0); err != nil || string(b) != "hel" {
		t.Fatalf("read max 3: %q %v", b, err)
	}
	if b, err := call.NetRead(acc.Handle, 100, 0); err != nil || string(b) != "lo" {
		t.Fatalf("read the rest: %q %v", b, err)
	}
	// The client never sends again: the read times out, and the stream
	// still works afterwards.
	if _, err := call.NetRead(acc.Handle, 100, 1); hostapi.CodeOf(err) != hostapi.CodeTimeout {
		t.Fatalf("silent peer: %v, want timeout", err)
	}
	if err := call.NetWrite(acc.Handle, []byte("back")); err != nil {
		t.Fatal(err)
	}
	if b, err := call.NetRead(client, 100, 0); err != nil || string(b) != "back" {
		t.Fatalf("after a timeout: %q %v", b, err)
	}
	if err := call.NetClose(client); err != nil {
		t.Fatal(err)
	}
	if _, err := call.NetRead(acc.Handle, 100, 0); hostapi.CodeOf(err) != hostapi.CodeClosed {
		t.Fatalf("after the peer closed: %v, want closed", err)
	}
	if _, err := call.NetRead(client, 100, 0); hostapi.CodeOf(err) != hostapi.CodeNotFound {
		t.Fatalf("a closed handle: %v, want not found", err)
	}
	if _, err := call.NetAccept(acc.Handle, 1); hostapi.CodeOf(err) != hostapi.CodeInvalid {
		t.Fatalf("accept on a stream: %v, want invalid", err)
	}
	if _, err := call.NetRead(ln.Handle, 1, 1); hostapi.CodeOf(err) != hostapi.CodeInvalid {
		t.Fatalf("read on a listener: %v, want invalid", err)
	}
	if _, err := call.NetRead(acc.Handle, 0, 1); hostapi.CodeOf(err) != hostapi.CodeInvalid {
		t.Fatalf("read max 0: %v, want invalid", err)
	}
	if err := call.NetWrite(acc.Handle, make([]byte, hostapi.MaxNetWrite+1)); hostapi.CodeOf(err) != hostapi.CodeTooLarge {
		t.Fatalf("huge write: %v, want too large", err)
	}
	if _, err := call.NetAccept(ln.Handle, 1); hostapi.CodeOf(err) != hostapi.CodeTimeout {
		t.Fatalf("accept with nobody calling: %v, want timeout", err)
	}
}

// Binds the gate or the host must refuse: public and wildcard addresses,
// ports and hosts net_bind does not grant.
func TestNetBindTCPEscapes(t *testing.T) {
	f := newFixture(t)
	c := f.capsule(t, `
[package]
name = "binder"
version = "0.1.0"
[capabilities]
net_bind = ["127.0.0.1:*", "localhost:8080", "0.0.0.0:*", "10.0.0.1:*"]
`)
	defer c.Close()
	call, _ := c.Begin(context.Background(), "default")
	defer call.End()
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", ":0", "10.0.0.1:0", "localhost:8081", "[::1]:0", "127.0.0.1", "2130706433:0", "example.com:0", "unix:/tmp/x.sock"} {
		t.Run(addr, func(t *testing.T) {
			if l, err := call.NetBind(addr); hostapi.CodeOf(err) != hostapi.CodeDenied {
				t.Fatalf("got %+v, %v; want denied", l, err)
			}
		})
	}
	if n := c.nets.Len(); n != 0 {
		t.Fatalf("refused binds left %d handles", n)
	}
}

// Handles are the capsule's and the principal's: another principal and
// another capsule see none of them; all close when the capsule unloads;
// the ninth is refused.
func TestNetHandlesBelongToTheCapsuleAndPrincipal(t *testing.T) {
	f := newFixture(t)
	f.deps.Egress.AllowLocal = []string{"127.0.0.1/32"}
	c := f.capsule(t, loopbackPair)
	other := f.capsule(t, strings.Replace(loopbackPair, `name = "listener"`, `name = "other"`, 1))
	defer other.Close()

	alice, _ := c.Begin(context.Background(), "alice")
	defer alice.End()
	ln, err := alice.NetBind("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr)
	p, _ := strconv.Atoi(port)
	s, err := alice.NetConnect("127.0.0.1", p)
	if err != nil {
		t.Fatal(err)
	}

	bob, _ := c.Begin(context.Background(), "bob")
	defer bob.End()
	if err := bob.NetWrite(s, []byte("x")); hostapi.CodeOf(err) != hostapi.CodeNotFound {
		t.Errorf("another principal's stream: %v, want not found", err)
	}
	if _, err := bob.NetAccept(ln.Handle, 1); hostapi.CodeOf(err) != hostapi.CodeNotFound {
		t.Errorf("another principal's listener: %v, want not found", err)
	}
	if err := bob.NetClose(s); hostapi.CodeOf(err) != hostapi.CodeNotFound {
		t.Errorf("closing another principal's stream: %v, want not found", err)
	}
	oc, _ := other.Begin(context.Background(), "alice")
	defer oc.End()
	if err := oc.NetWrite(s, []byte("x")); hostapi.CodeOf(err) != hostapi.CodeNotFound {
		t.Errorf("another capsule's stream: %v, want not found", err)
	}

	// Two open; six more fit, then the ninth is refused whoever asks.
	for i := range hostapi.MaxNetHandles - 2 {
		if _, err := alice.NetBind("127.0.0.1:0"); err != nil {
			t.Fatalf("handle %d: %v", i+3, err)
		}
	}
	if _, err := bob.NetBind("127.0.0.1:0"); hostapi.CodeOf(err) != hostapi.CodeRateLimited {
		t.Fatalf("ninth handle: %v, want rate limited", err)
	}
	if _, err := alice.NetConnect("127.0.0.1", p); hostapi.CodeOf(err) != hostapi.CodeRateLimited {
		t.Fatalf("ninth handle by connect: %v, want rate limited", err)
	}
	if _, err := alice.NetAccept(ln.Handle, 1); hostapi.CodeOf(err) != hostapi.CodeRateLimited {
		t.Fatalf("ninth handle by accept: %v, want rate limited", err)
	}

	// Unload: every handle closes, later use and later opens are refused,
	// and the listener's port is free again.
	c.Close()
	if err := alice.NetWrite(s, []byte("x")); hostapi.CodeOf(err) != hostapi.CodeClosed {
		t.Errorf("a stream after unload: %v, want closed", err)
	}
	if _, err := alice.NetBind("127.0.0.1:0"); hostapi.CodeOf(err) != hostapi.CodeClosed {
		t.Errorf("a bind after unload: %v, want closed", err)
	}
	if n := c.nets.Len(); n != 0 {
		t.Errorf("%d handles open after unload", n)
	}
	if l, err := net.Listen("tcp", ln.Addr); err != nil {
		t.Errorf("the unloaded capsule's port is still taken: %v", err)
	} else {
		_ = l.Close()
	}
}

// A read waiting on a peer that never sends ends when the call is
// cancelled, with the call's reason, not at its timeout.
func TestNetReadEndsWithTheCall(t *testing.T) {
	f := newFixture(t)
	f.deps.Egress.AllowLocal = []string{"127.0.0.1/32"}
	c := f.capsule(t, loopbackPair)
	defer c.Close()
	call, _ := c.Begin(context.Background(), "default")
	ln, err := call.NetBind("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr)
	p, _ := strconv.Atoi(port)
	s, err := call.NetConnect("127.0.0.1", p)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := call.NetRead(s, 10, hostapi.MaxNetWait)
		done <- err
	}()
	call.End()
	if err := <-done; hostapi.CodeOf(err) != hostapi.CodeCancelled {
		t.Fatalf("read when the call ended: %v, want cancelled", err)
	}
	// The stream is the capsule's: a later call of the principal still
	// has it.
	next, _ := c.Begin(context.Background(), "default")
	defer next.End()
	if err := next.NetClose(s); err != nil {
		t.Fatalf("closing in the next call: %v", err)
	}
}
