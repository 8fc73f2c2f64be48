package egress

import (
	"errors"
	"net/netip"
	"testing"
)

func TestParseAllowLocalRefuses(t *testing.T) {
	for _, entry := range []string{
		"example.com:80",    // a name would have to be resolved
		"127.0.0.1",         // no port
		"127.0.0.1:0",       // port zero
		"127.0.0.1:http",    // named port
		"127.0.0.1:65536",   // out of range
		"10.0.0.0/33",       // bad prefix
		"[fe80::1%eth0]:80", // zones are not matched
		"[::1]:9000:1",      // garbage
	} {
		t.Run(entry, func(t *testing.T) {
			if err := CheckAllowLocal(entry); !errors.Is(err, ErrInvalidAddress) {
				t.Fatalf("CheckAllowLocal(%q) = %v, want ErrInvalidAddress", entry, err)
			}
		})
	}
}

func TestCheckAllowLocalAccepts(t *testing.T) {
	for _, entry := range []string{"127.0.0.1:11434", "LocalHost:8080", "[::1]:9000", "10.0.0.5:*", "10.1.2.0/24", "fd00::/8"} {
		if err := CheckAllowLocal(entry); err != nil {
			t.Errorf("CheckAllowLocal(%q) = %v", entry, err)
		}
	}
}

func TestAllowlistMatchesAddressAndPort(t *testing.T) {
	list, err := parseAllowLocal([]string{
		"127.0.0.1:11434",
		"localhost:8080",
		"[::1]:9000",
		"10.1.2.0/24",
		"192.168.7.7:*",
		"::ffff:172.16.0.0/108",
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		addr string
		port uint16
		want bool
	}{
		{"127.0.0.1", 11434, true},
		{"127.0.0.1", 11435, false}, // right IP, wrong port
		{"127.0.0.2", 11434, false}, // right port, wrong IP
		{"::ffff:127.0.0.1", 11434, true},
		{"127.0.0.1", 8080, true}, // localhost means both loopbacks
		{"::1", 8080, true},
		{"127.0.0.2", 8080, false},
		{"::1", 9000, true},
		{"::1", 9001, false},
		{"127.0.0.1", 9000, false},
		{"10.1.2.77", 1, true},
		{"10.1.2.77", 65535, true},
		{"10.1.3.1", 80, false},
		{"192.168.7.7", 22, true},
		{"192.168.7.8", 22, false},
		{"172.16.0.9", 443, true}, // mapped prefix matched as IPv4
		{"fe80::1%eth0", 80, false},
	}
	for _, tt := range tests {
		if got := list.allows(netip.MustParseAddr(tt.addr), tt.port); got != tt.want {
			t.Errorf("allows(%s, %d) = %v, want %v", tt.addr, tt.port, got, tt.want)
		}
	}
	var empty allowlist
	if empty.allows(netip.MustParseAddr("127.0.0.1"), 80) {
		t.Error("the empty allowlist allows something")
	}
}
