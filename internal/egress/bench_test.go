package egress

import (
	"context"
	"net/netip"
	"testing"
)

func BenchmarkCheckAddr(b *testing.B) {
	addrs := []netip.Addr{
		netip.MustParseAddr("93.184.216.34"),
		netip.MustParseAddr("10.0.0.1"),
		netip.MustParseAddr("2606:4700::1111"),
		netip.MustParseAddr("2001:0:808:808:0:0:f5ff:fffe"),
	}
	for i := 0; b.Loop(); i++ {
		_ = CheckAddr(addrs[i%len(addrs)])
	}
}

func BenchmarkNormalizeHost(b *testing.B) {
	hosts := []string{"api.example.com", "0x7f.1", "[::ffff:7f00:1]", "Example.COM."}
	for i := 0; b.Loop(); i++ {
		_, _ = NormalizeHost(hosts[i%len(hosts)])
	}
}

// BenchmarkDialerOverhead measures what the guard adds to one dial: gate
// callback, normalisation, a (fake) resolution, the checks, and an in-memory
// pipe as the connection.
func BenchmarkDialerOverhead(b *testing.B) {
	r := newFakeResolver(map[string][]string{"public.example": {"93.184.216.34"}})
	fn := &fakeNet{routes: map[string]string{"93.184.216.34:443": ""}}
	d, err := NewDialer(Options{Resolver: r, Dial: fn.dial, CheckConn: allowAnyConn, Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for b.Loop() {
		conn, err := d.DialContext(ctx, "tcp", "public.example:443")
		if err != nil {
			b.Fatal(err)
		}
		_ = conn.Close()
		fn.dialed, fn.deadlines = fn.dialed[:0], fn.deadlines[:0]
		r.queried = r.queried[:0]
	}
}
