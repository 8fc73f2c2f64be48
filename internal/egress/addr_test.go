package egress

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestCheckAddrRefuses(t *testing.T) {
	tests := []struct {
		addr   string
		reason string // a fragment the error must contain
	}{
		{"127.0.0.1", "loopback"},
		{"127.255.255.254", "loopback"},
		{"0.0.0.0", "unspecified"},
		{"0.0.0.1", "this network"},
		{"0.255.255.255", "this network"},
		{"10.0.0.1", "private-use"},
		{"10.255.255.255", "private-use"},
		{"172.16.0.1", "private-use"},
		{"172.31.255.255", "private-use"},
		{"192.168.1.1", "private-use"},
		{"169.254.169.254", "link-local"},
		{"100.64.0.1", "CGNAT"},
		{"100.127.255.255", "CGNAT"},
		{"192.0.0.170", "IETF protocol assignments"},
		{"192.0.2.1", "documentation"},
		{"198.51.100.1", "documentation"},
		{"203.0.113.9", "documentation"},
		{"198.18.0.1", "benchmarking"},
		{"198.19.255.255", "benchmarking"},
		{"192.88.99.1", "6to4 relay"},
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast"},
		{"240.0.0.1", "reserved"},
		{"255.255.255.255", "limited broadcast"},
		{"::1", "loopback"},
		{"::", "unspecified"},
		{"fc00::1", "unique local"},
		{"fd00::1", "unique local"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"fec0::1", "site-local"},
		{"ff02::1", "multicast"},
		{"100::1", "discard-only"},
		{"::ffff:127.0.0.1", "IPv4-mapped IPv6 embedding 127.0.0.1, loopback"},
		{"::ffff:10.0.0.1", "IPv4-mapped"},
		{"::ffff:169.254.169.254", "link-local"},
		{"::127.0.0.1", "IPv4-compatible"},
		{"::8.8.8.8", "IPv4-compatible"}, // deprecated form, refused whatever it embeds
		{"::ffff:0:7f00:1", "outside 2000::/3"},
		{"64:ff9b::7f00:1", "NAT64 (64:ff9b::/96) embedding 127.0.0.1"},
		{"64:ff9b::a9fe:a9fe", "NAT64 (64:ff9b::/96) embedding 169.254.169.254"},
		{"64:ff9b:1::808:808", "local-use NAT64"},
		{"64:ff9b::1:0:0:1", "outside 2000::/3"},
		{"2002:7f00:1::", "6to4 (2002::/16) embedding 127.0.0.1"},
		{"2002:c0a8:101::1", "6to4 (2002::/16) embedding 192.168.1.1"},
		{"2001:0:808:808:0:0:f5ff:fffe", "Teredo (2001::/32) client embedding 10.0.0.1"},
		{"2001:0:a00:1::808:808", "Teredo (2001::/32) server embedding 10.0.0.1"},
		{"2001:2::1", "benchmarking"},
		{"2001:db8::1", "documentation"},
		{"3fff::1", "documentation"},
		{"2001:10::1", "ORCHID"},
		{"2001:20::1", "ORCHIDv2"},
		{"5f00::1", "outside 2000::/3"}, // SRv6 SIDs
		{"4000::1", "outside 2000::/3"},
		{"2001:4860:4860::8888%eth0", "scoped address"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			ip := netip.MustParseAddr(tt.addr)
			err := CheckAddr(ip)
			if !errors.Is(err, ErrForbiddenAddress) {
				t.Fatalf("CheckAddr(%s) = %v, want ErrForbiddenAddress", ip, err)
			}
			var ae *AddrError
			if !errors.As(err, &ae) || ae.Addr != ip {
				t.Fatalf("CheckAddr(%s) error %v does not carry the address", ip, err)
			}
			if msg := err.Error(); !strings.Contains(msg, ip.String()) || !strings.Contains(msg, tt.reason) {
				t.Fatalf("CheckAddr(%s) = %q, want it to name the address and %q", ip, msg, tt.reason)
			}
		})
	}
}

func TestCheckAddrAllowsPublic(t *testing.T) {
	for _, a := range []string{
		"8.8.8.8",
		"1.1.1.1",
		"93.184.216.34",
		"172.32.0.1",      // just past 172.16/12
		"100.128.0.0",     // just past 100.64/10
		"192.167.255.255", // just before 192.168/16
		"11.0.0.0",
		"223.255.255.255",
		"2001:4860:4860::8888",
		"2606:4700::1111",
		"::ffff:8.8.8.8",
		"64:ff9b::808:808",
		"2002:808:808::1",
		"2001:0:4136:e378:8000:63bf:f7f7:f7f7", // Teredo, server and client public
	} {
		if err := CheckAddr(netip.MustParseAddr(a)); err != nil {
			t.Errorf("CheckAddr(%s) = %v, want nil", a, err)
		}
	}
}

func TestCheckAddrRefusesTheZeroAddr(t *testing.T) {
	if err := CheckAddr(netip.Addr{}); !errors.Is(err, ErrForbiddenAddress) {
		t.Fatalf("CheckAddr(zero) = %v, want ErrForbiddenAddress", err)
	}
}
