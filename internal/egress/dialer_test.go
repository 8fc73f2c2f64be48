package egress

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func newTestDialer(t *testing.T, r *fakeResolver, fn *fakeNet, mod func(*Options)) *Dialer {
	t.Helper()
	opts := Options{Resolver: r, Dial: fn.dial, CheckConn: allowAnyConn, Logger: quietLogger()}
	if mod != nil {
		mod(&opts)
	}
	d, err := NewDialer(opts)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDialerRefusesEverySSRFSpelling(t *testing.T) {
	for _, host := range ssrfHosts {
		t.Run(host, func(t *testing.T) {
			r := newFakeResolver(attackDNS())
			fn := newFakeNet(t, publicRoutes())
			d := newTestDialer(t, r, fn, nil)
			conn, err := d.DialContext(context.Background(), "tcp", dialAddress(t, host, "80"))
			if err == nil {
				_ = conn.Close()
				t.Fatal("dial succeeded")
			}
			if !errors.Is(err, ErrForbiddenAddress) {
				t.Fatalf("err = %v, want ErrForbiddenAddress", err)
			}
			if got := fn.addresses(); len(got) != 0 {
				t.Fatalf("the network was offered %v", got)
			}
		})
	}
}

func TestDialerConnectsOnlyToCheckedLiterals(t *testing.T) {
	tests := []struct {
		network, address string
		want             []string
	}{
		{"tcp", "8.8.8.8:53", []string{"8.8.8.8:53"}},
		{"tcp", "public.example:80", []string{"93.184.216.34:80"}},
		{"tcp", "Public.Example.:80", []string{"93.184.216.34:80"}},
		{"tcp", "0x5d.0xb8.0xd8.0x22:80", []string{"93.184.216.34:80"}},
		{"tcp", "[::ffff:93.184.216.34]:80", []string{"93.184.216.34:80"}},
		{"tcp6", "[2606:4700::1111]:80", []string{"[2606:4700::1111]:80"}},
		{"tcp6", "dual.example:80", []string{"[2606:4700::1111]:80"}},
		{"tcp4", "dual.example:80", []string{"93.184.216.34:80"}},
		{"tcp", "[64:ff9b::5db8:d822]:80", []string{"[64:ff9b::5db8:d822]:80"}},
		// The first address is unreachable, so the second is tried.
		{"tcp", "two.example:80", []string{"1.1.1.1:80", "93.184.216.34:80"}},
	}
	for _, tt := range tests {
		t.Run(tt.network+" "+tt.address, func(t *testing.T) {
			dns := attackDNS()
			dns["dual.example"] = []string{"93.184.216.34", "2606:4700::1111"}
			dns["two.example"] = []string{"1.1.1.1", "93.184.216.34"}
			r := newFakeResolver(dns)
			routes := publicRoutes()
			routes["8.8.8.8:53"] = ""
			routes["[64:ff9b::5db8:d822]:80"] = ""
			fn := newFakeNet(t, routes)
			d := newTestDialer(t, r, fn, nil)
			conn, err := d.DialContext(context.Background(), tt.network, tt.address)
			if err != nil {
				t.Fatal(err)
			}
			_ = conn.Close()
			if got := fn.addresses(); !slices.Equal(got, tt.want) {
				t.Fatalf("dialled %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDialerAsksNetConnectFirst(t *testing.T) {
	type call struct {
		host string
		port int
	}
	tests := []struct {
		address string
		want    call
	}{
		{"Example.COM.:443", call{"example.com", 443}},
		{"0x7f.1:80", call{"127.0.0.1", 80}},
		{"[::FFFF:7F00:1]:8080", call{"::ffff:127.0.0.1", 8080}},
	}
	for _, tt := range tests {
		t.Run(tt.address, func(t *testing.T) {
			r := newFakeResolver(attackDNS())
			fn := newFakeNet(t, publicRoutes())
			var got []call
			gateErr := errors.New("gate says no")
			d := newTestDialer(t, r, fn, func(o *Options) {
				o.CheckConn = func(host string, port int) error {
					got = append(got, call{host, port})
					return gateErr
				}
			})
			_, err := d.DialContext(context.Background(), "tcp", tt.address)
			if !errors.Is(err, ErrDenied) || !errors.Is(err, gateErr) {
				t.Fatalf("err = %v, want ErrDenied wrapping the gate's error", err)
			}
			if !strings.Contains(err.Error(), "net_connect") {
				t.Fatalf("err = %q does not name net_connect", err)
			}
			if !slices.Equal(got, []call{tt.want}) {
				t.Fatalf("CheckConn saw %v, want %v", got, tt.want)
			}
			if q := r.queries(); len(q) != 0 {
				t.Fatalf("resolver was asked %v before the gate allowed", q)
			}
			if a := fn.addresses(); len(a) != 0 {
				t.Fatalf("dialled %v after a denial", a)
			}
		})
	}
}

func TestDialerRefusesMalformedRequests(t *testing.T) {
	tests := []struct{ network, address string }{
		{"tcp", "no-port"},
		{"tcp", "public.example:0"},
		{"tcp", "public.example:http"},
		{"tcp", "public.example:65536"},
		{"tcp", "bad host:80"},
		{"tcp", "example.123:80"},
		{"udp", "public.example:53"},
		{"unix", "/tmp/sock:1"},
		{"tcp4", "[2606:4700::1111]:80"},
		{"tcp6", "8.8.8.8:80"},
		{"tcp6", "public.example:80"}, // no IPv6 answer
	}
	for _, tt := range tests {
		t.Run(tt.network+" "+tt.address, func(t *testing.T) {
			r := newFakeResolver(attackDNS())
			fn := newFakeNet(t, publicRoutes())
			d := newTestDialer(t, r, fn, nil)
			if _, err := d.DialContext(context.Background(), tt.network, tt.address); !errors.Is(err, ErrInvalidAddress) {
				t.Fatalf("err = %v, want ErrInvalidAddress", err)
			}
			if a := fn.addresses(); len(a) != 0 {
				t.Fatalf("dialled %v", a)
			}
		})
	}
}

func TestDialerReportsResolverAndDialFailures(t *testing.T) {
	r := newFakeResolver(attackDNS())
	fn := newFakeNet(t, nil) // nothing is reachable
	d := newTestDialer(t, r, fn, nil)

	_, err := d.DialContext(context.Background(), "tcp", "nowhere.example:80")
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || !strings.Contains(err.Error(), "resolve nowhere.example") {
		t.Fatalf("err = %v, want the resolver's DNSError with context", err)
	}

	r.add("two.example", "1.1.1.1", "8.8.8.8")
	_, err = d.DialContext(context.Background(), "tcp", "two.example:80")
	if err == nil || !strings.Contains(err.Error(), "1.1.1.1:80 unreachable") || !strings.Contains(err.Error(), "8.8.8.8:80 unreachable") {
		t.Fatalf("err = %v, want both attempts reported", err)
	}
}

func TestDialerStopsTryingOnceTheContextEnds(t *testing.T) {
	r := newFakeResolver(map[string][]string{"two.example": {"1.1.1.1", "8.8.8.8"}})
	fn := newFakeNet(t, publicRoutes())
	d := newTestDialer(t, r, fn, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.DialContext(ctx, "tcp", "two.example:80"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if a := fn.addresses(); len(a) != 1 {
		t.Fatalf("dialled %v, want one attempt", a)
	}
}

func TestDialerBoundsTheConnectWithTimeout(t *testing.T) {
	fn := newFakeNet(t, map[string]string{"8.8.8.8:53": ""})
	d := newTestDialer(t, newFakeResolver(nil), fn, func(o *Options) { o.Timeout = time.Hour })
	before := time.Now()
	conn, err := d.DialContext(context.Background(), "tcp", "8.8.8.8:53")
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.Close()
	dl := fn.deadlines[0]
	if dl.IsZero() || dl.Before(before.Add(time.Hour)) || dl.After(time.Now().Add(time.Hour)) {
		t.Fatalf("dial deadline %v is not the configured hour from the call", dl)
	}
	if d.g.timeout != time.Hour {
		t.Fatalf("timeout = %v", d.g.timeout)
	}
	if def := newTestDialer(t, newFakeResolver(nil), fn, nil); def.g.timeout != DefaultConnectTimeout {
		t.Fatalf("default timeout = %v, want %v", def.g.timeout, DefaultConnectTimeout)
	}
}

// A name that answers a public address and then a private one (DNS
// rebinding) gets each connection checked on the address actually dialled.
func TestDialerChecksEveryResolutionOfARebindingName(t *testing.T) {
	r := newFakeResolver(nil)
	r.add("rebind.example", "93.184.216.34")
	r.add("rebind.example", "10.0.0.1")
	fn := newFakeNet(t, publicRoutes())
	d := newTestDialer(t, r, fn, nil)

	conn, err := d.DialContext(context.Background(), "tcp", "rebind.example:80")
	if err != nil {
		t.Fatalf("first dial: %v", err)
	}
	_ = conn.Close()
	_, err = d.DialContext(context.Background(), "tcp", "rebind.example:80")
	if !errors.Is(err, ErrForbiddenAddress) || !strings.Contains(err.Error(), "10.0.0.1") {
		t.Fatalf("second dial: err = %v, want 10.0.0.1 refused", err)
	}
	if got := fn.addresses(); !slices.Equal(got, []string{"93.184.216.34:80"}) {
		t.Fatalf("dialled %v", got)
	}
}

func TestDialerAllowlist(t *testing.T) {
	tests := []struct {
		name, address string
		allowed       bool
	}{
		{"hit", "127.0.0.1:11434", true},
		{"hit by name", "ollama.example:11434", true},
		{"hit via localhost entry over IPv6", "[::1]:8080", true},
		{"right IP, wrong port", "127.0.0.1:11435", false},
		{"right port, wrong IP", "127.0.0.2:11434", false},
		{"CIDR hit", "10.1.2.3:22", true},
		{"CIDR miss", "10.1.3.3:22", false},
		{"mapped spelling of an allowed address", "[::ffff:127.0.0.1]:11434", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newFakeResolver(map[string][]string{"ollama.example": {"127.0.0.1"}})
			fn := newFakeNet(t, map[string]string{
				"127.0.0.1:11434": "", "[::1]:8080": "", "10.1.2.3:22": "",
			})
			d := newTestDialer(t, r, fn, func(o *Options) {
				o.AllowLocal = []string{"127.0.0.1:11434", "localhost:8080", "10.1.2.0/24"}
			})
			conn, err := d.DialContext(context.Background(), "tcp", tt.address)
			if tt.allowed {
				if err != nil {
					t.Fatal(err)
				}
				_ = conn.Close()
				return
			}
			if !errors.Is(err, ErrForbiddenAddress) {
				t.Fatalf("err = %v, want ErrForbiddenAddress", err)
			}
			if a := fn.addresses(); len(a) != 0 {
				t.Fatalf("dialled %v", a)
			}
		})
	}
}

func TestNewDialerOptions(t *testing.T) {
	if _, err := NewDialer(Options{}); err == nil || !strings.Contains(err.Error(), "CheckConn") {
		t.Fatalf("NewDialer without CheckConn: %v", err)
	}
	if _, err := NewDialer(Options{CheckConn: allowAnyConn, AllowLocal: []string{"example.com:80"}}); !errors.Is(err, ErrInvalidAddress) {
		t.Fatalf("NewDialer with a bad allowlist: %v", err)
	}
	d, err := NewDialer(Options{CheckConn: allowAnyConn})
	if err != nil {
		t.Fatal(err)
	}
	if d.g.resolver != net.DefaultResolver || d.g.log == nil || d.g.dial == nil {
		t.Fatal("defaults not filled in")
	}
}

// The default final dialer checks the socket address in Control. It is driven
// only against loopback listeners.
func TestDefaultDialerControlChecksTheSocketAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	addr := ln.Addr().String()
	port := ln.Addr().(*net.TCPAddr).Port

	t.Run("allowlisted loopback connects", func(t *testing.T) {
		d, err := NewDialer(Options{CheckConn: allowAnyConn, AllowLocal: []string{addr}, Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		conn, err := d.DialContext(context.Background(), "tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.Close()
		accepted, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		_ = accepted.Close()
	})

	t.Run("Control refuses a loopback address not allowlisted", func(t *testing.T) {
		g, err := newGuard(Options{AllowLocal: []string{"127.0.0.1:" + strconv.Itoa(port+1)}, Logger: quietLogger()}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		raw := &net.Dialer{ControlContext: g.control}
		_, err = raw.DialContext(context.Background(), "tcp", addr)
		if !errors.Is(err, ErrForbiddenAddress) {
			t.Fatalf("err = %v, want ErrForbiddenAddress from Control", err)
		}
		// Control runs before connect(2): nothing may be waiting to be accepted.
		_ = ln.(*net.TCPListener).SetDeadline(time.Now().Add(50 * time.Millisecond))
		if c, err := ln.Accept(); err == nil {
			_ = c.Close()
			t.Fatal("the listener received a connection Control refused")
		}
	})

	t.Run("Control refuses an unparsable socket address", func(t *testing.T) {
		g, err := newGuard(Options{Logger: quietLogger()}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.control(context.Background(), "tcp", "not-an-address", nil); !errors.Is(err, ErrInvalidAddress) {
			t.Fatalf("err = %v", err)
		}
		if err := g.control(context.Background(), "tcp", netip.MustParseAddrPort("93.184.216.34:80").String(), nil); err != nil {
			t.Fatalf("public address refused: %v", err)
		}
	})
}
