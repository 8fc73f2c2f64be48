package egress

import (
	"errors"
	"strings"
	"testing"
)

func TestNormalizeHost(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"example.com", "example.com"},
		{"Example.COM.", "example.com"},
		{"under_score.example", "under_score.example"},
		{"xn--bcher-kva.example", "xn--bcher-kva.example"},
		{"123.example", "123.example"}, // numeric label, but not the last one
		{"0xg.example", "0xg.example"}, // 0x followed by a non-hex letter is a name
		{"example.0xg", "example.0xg"}, // likewise as the last label
		{"127.0.0.1", "127.0.0.1"},
		{"127.0.0.1.", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"0X7F.0.0.1", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"017700000001", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"10.0x10203", "10.1.2.3"},
		{"0xa9.0376.43518", "169.254.169.254"},
		{"0x", "0.0.0.0"},
		{"0", "0.0.0.0"},
		{"00", "0.0.0.0"},
		{"0xffffffff", "255.255.255.255"},
		{"4294967295", "255.255.255.255"},
		{"[::1]", "::1"},
		{"::1", "::1"},
		{"[::FFFF:7F00:1]", "::ffff:127.0.0.1"},
		{"[0:0:0:0:0:0:0:1]", "::1"},
		{"[fe80::1%eth0]", "fe80::1%eth0"},
		{"[64:FF9B::7F00:1]", "64:ff9b::7f00:1"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := NormalizeHost(tt.in)
			if err != nil || got != tt.want {
				t.Fatalf("NormalizeHost(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
			again, err := NormalizeHost(got)
			if err != nil || again != got {
				t.Fatalf("NormalizeHost is not idempotent: %q -> %q, %v", got, again, err)
			}
		})
	}
}

func TestNormalizeHostRefuses(t *testing.T) {
	tests := []struct {
		in, reason string
	}{
		{"", "empty host"},
		{".", "host"},
		{"..", "host"},
		{"a..b", "empty label"},
		{".example.com", "empty label"},
		{"example.com..", "empty label"},
		{"exa mple.com", "not allowed"},
		{"exa/mple.com", "not allowed"},
		{"evil.com@127.0.0.1", "not an IPv4 address"},
		{"127.0.0.1@evil.com", "not allowed"},
		{"bücher.example", "non-ASCII"},
		{"\u212aexample.com", "non-ASCII"}, // Kelvin sign folds to ASCII k
		{strings.Repeat("a", 64) + ".example", "longer than 63"},
		{strings.Repeat("a.", 127) + "com", "host"},
		{strings.Repeat("a", 300), "bytes"},
		{"256.0.0.1", "not an IPv4 address"},
		{"1.256.3.4", "not an IPv4 address"},
		{"1.2.3.256", "not an IPv4 address"},
		{"1.2.65536", "not an IPv4 address"},
		{"1.16777216", "not an IPv4 address"},
		{"4294967296", "not an IPv4 address"},
		{"0x100000000", "not an IPv4 address"},
		{"99999999999999999999999", "not an IPv4 address"},
		{"1.2.3.4.5", "not an IPv4 address"},
		{"08.0.0.1", "not an IPv4 address"},
		{"0x7g.1", "not an IPv4 address"},
		{"1..1", "not an IPv4 address"},
		{"example.123", "not an IPv4 address"},
		{"example.0x1", "not an IPv4 address"},
		{"[::1", "unbalanced bracket"},
		{"[127.0.0.1]", "not an IPv6 address"},
		{"[]", "not an IPv6 address"},
		{"a:b", "not an IPv6 address"},
		{"::ffff:1:2:3:4:5:6:7", "not an IPv6 address"},
		{"::10%00]", "not an interface name"},
		{"[fe80::1%eth0/x]", "not an interface name"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := NormalizeHost(tt.in)
			if !errors.Is(err, ErrInvalidAddress) {
				t.Fatalf("NormalizeHost(%q) = %q, %v; want ErrInvalidAddress", tt.in, got, err)
			}
			if !strings.Contains(err.Error(), tt.reason) {
				t.Fatalf("NormalizeHost(%q) error %q does not say %q", tt.in, err, tt.reason)
			}
		})
	}
}
