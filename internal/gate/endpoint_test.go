package gate

import (
	"testing"

	"github.com/astrid-go/astrid/manifest"
)

func TestNetConnect(t *testing.T) {
	cases := []struct {
		name     string
		entries  []string
		host     string
		port     int
		allow    bool
		fragment string
	}{
		// upstream 19-27
		{name: "19 exact", entries: []string{"example.com:443"}, host: "example.com", port: 443, allow: true},
		{name: "20 port mismatch", entries: []string{"example.com:443"}, host: "example.com", port: 80},
		{name: "21 host mismatch", entries: []string{"example.com:443"}, host: "evil.com", port: 443},
		{name: "22 wildcard port low", entries: []string{"example.com:*"}, host: "example.com", port: 1, allow: true},
		{name: "22 wildcard port high", entries: []string{"example.com:*"}, host: "example.com", port: 65535, allow: true},
		{name: "23 case-insensitive", entries: []string{"Example.COM:443"}, host: "example.com", port: 443, allow: true},
		{name: "24 missing colon", entries: []string{"example.com"}, host: "example.com", port: 443},
		{name: "25 invalid port", entries: []string{"example.com:abc"}, host: "example.com", port: 443},
		{name: "26 empty allowlist", host: "example.com", port: 443, fragment: "is not in net_connect"},
		{name: "27 allowed", entries: []string{"example.com:443"}, host: "example.com", port: 443, allow: true},
		{name: "27 other port", entries: []string{"example.com:443"}, host: "example.com", port: 80},
		{name: "27 other host", entries: []string{"example.com:443"}, host: "evil.com", port: 443},
		// this gate's forms
		{name: "request case and dot", entries: []string{"db.internal:5432"}, host: "DB.Internal.", port: 5432, allow: true},
		{name: "bracketed IPv6 entry", entries: []string{"[::1]:443"}, host: "::1", port: 443, allow: true},
		{name: "upstream IPv6 entry", entries: []string{"::1:443"}, host: "[::1]", port: 443, allow: true},
		{name: "resolve only via host:*", entries: []string{"example.com:*"}, host: "example.com", port: 0, allow: true},
		{name: "resolve only via host:port", entries: []string{"example.com:443"}, host: "example.com", port: 0},
		// attacks
		{name: "localhost is not 127.0.0.1", entries: []string{"127.0.0.1:5432"}, host: "localhost", port: 5432},
		{name: "127.0.0.1 is not localhost", entries: []string{"localhost:5432"}, host: "127.0.0.1", port: 5432},
		{name: "127.0.0.2 is not 127.0.0.1", entries: []string{"127.0.0.1:5432"}, host: "127.0.0.2", port: 5432},
		{name: "DNS wildcard entry", entries: []string{"*.example.com:443"}, host: "a.example.com", port: 443},
		{name: "star host entry", entries: []string{"*:443"}, host: "example.com", port: 443},
		{name: "subdomain not granted", entries: []string{"example.com:443"}, host: "a.example.com", port: 443},
		{name: "suffix host", entries: []string{"example.com:443"}, host: "evil-example.com", port: 443},
		{name: "leading-zero port entry", entries: []string{"example.com:0443"}, host: "example.com", port: 443},
		{name: "signed port entry", entries: []string{"example.com:+443"}, host: "example.com", port: 443},
		{name: "port over range entry", entries: []string{"example.com:65536"}, host: "example.com", port: 0},
		{name: "negative port", entries: []string{"example.com:*"}, host: "example.com", port: -1, fragment: "outside 0-65535"},
		{name: "port over range", entries: []string{"example.com:*"}, host: "example.com", port: 65536},
		{name: "empty host", entries: []string{":443"}, host: "", port: 443},
		{name: "odd IPv4 spelling", entries: []string{"127.0.0.1:*"}, host: "2130706433", port: 80},
		{name: "unclosed bracket entry", entries: []string{"[::1:443"}, host: "::1", port: 443},
		{name: "bracket without port", entries: []string{"[::1]"}, host: "::1", port: 443},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := mustGate(t, manifest.Capabilities{NetConnect: tc.entries}).NetConnect(tc.host, tc.port)
			if tc.allow {
				if err != nil {
					t.Fatalf("denied: %v", err)
				}
				return
			}
			wantDenied(t, err, "net_connect", tc.fragment)
		})
	}
}

func TestNetBind(t *testing.T) {
	cases := []struct {
		name     string
		entries  []string
		addr     string
		allow    bool
		fragment string
	}{
		// upstream 14 and 28-31
		{name: "14 empty denies unix", addr: "unix:/tmp/sock"},
		{name: "14 unix URL form", entries: []string{"unix:///tmp/sock"}, addr: "unix:/tmp/sock", allow: true},
		{name: "14 empty entry", entries: []string{""}, addr: "unix:/tmp/sock"},
		{name: "14 TCP entry is no unix grant", entries: []string{"127.0.0.1:8799"}, addr: "unix:/tmp/sock"},
		{name: "28 exact", entries: []string{"127.0.0.1:8799"}, addr: "127.0.0.1:8799", allow: true},
		{name: "28 other port", entries: []string{"127.0.0.1:8799"}, addr: "127.0.0.1:9000"},
		{name: "28 unspecified host", entries: []string{"127.0.0.1:8799"}, addr: "0.0.0.0:8799"},
		{name: "29 wildcard port", entries: []string{"127.0.0.1:*"}, addr: "127.0.0.1:8799", allow: true},
		{name: "29 wildcard port other", entries: []string{"127.0.0.1:*"}, addr: "127.0.0.1:1234", allow: true},
		{name: "30 unix entry is no TCP grant", entries: []string{"unix:*"}, addr: "127.0.0.1:8799"},
		{name: "31 empty denies TCP", addr: "127.0.0.1:8799"},
		// this gate's forms
		{name: "unix star", entries: []string{"unix:*"}, addr: "unix:/home/user/.astrid/run/cli.sock", allow: true},
		{name: "unix pattern", entries: []string{"unix:/run/astrid/*.sock"}, addr: "unix:/run/astrid/a.sock", allow: true},
		{name: "localhost entry", entries: []string{"localhost:*"}, addr: "LOCALHOST:80", allow: true},
		{name: "IPv6 loopback", entries: []string{"[::1]:8080"}, addr: "[::1]:8080", allow: true},
		{name: "ephemeral port", entries: []string{"127.0.0.1:*"}, addr: "127.0.0.1:0", allow: true},
		// attacks
		{name: "unspecified bind even if declared", entries: []string{"0.0.0.0:80"}, addr: "0.0.0.0:80", fragment: "loopback only"},
		{name: "IPv6 unspecified", entries: []string{"[::]:80"}, addr: "[::]:80"},
		{name: "empty host is all interfaces", entries: []string{"127.0.0.1:*"}, addr: ":80"},
		{name: "private address", entries: []string{"10.0.0.1:80"}, addr: "10.0.0.1:80", fragment: "is not a loopback address"},
		{name: "public name", entries: []string{"example.com:80"}, addr: "example.com:80"},
		{name: "localhost is not 127.0.0.1", entries: []string{"127.0.0.1:80"}, addr: "localhost:80"},
		{name: "127.0.0.1 is not localhost", entries: []string{"localhost:80"}, addr: "127.0.0.1:80"},
		{name: "other loopback address", entries: []string{"127.0.0.1:80"}, addr: "127.0.0.2:80"},
		{name: "port wildcard request", entries: []string{"127.0.0.1:*"}, addr: "127.0.0.1:*"},
		{name: "named port", entries: []string{"127.0.0.1:*"}, addr: "127.0.0.1:http"},
		{name: "no port", entries: []string{"127.0.0.1:*"}, addr: "127.0.0.1"},
		{name: "odd loopback spelling", entries: []string{"127.0.0.1:*"}, addr: "2130706433:80"},
		{name: "unix pattern stays in its directory", entries: []string{"unix:/run/astrid/*.sock"}, addr: "unix:/run/astrid/sub/a.sock"},
		{name: "unix pattern sibling directory", entries: []string{"unix:/run/astrid/*.sock"}, addr: "unix:/run/astrid-evil/a.sock"},
		{name: "unix dotdot", entries: []string{"unix:/run/astrid/*"}, addr: "unix:/run/astrid/../../etc/x"},
		{name: "unix dotdot under star", entries: []string{"unix:*"}, addr: "unix:/tmp/../etc/x"},
		{name: "unix relative", entries: []string{"unix:*"}, addr: "unix:cli.sock"},
		{name: "unix abstract", entries: []string{"unix:*"}, addr: "unix:@astrid"},
		{name: "unix NUL", entries: []string{"unix:*"}, addr: "unix:/tmp/a\x00b"},
		{name: "unix relative pattern", entries: []string{"unix:run/*.sock"}, addr: "unix:/run/a.sock"},
		{name: "unix bad pattern", entries: []string{"unix:/run/[a"}, addr: "unix:/run/[a"},
		{name: "unix dotdot pattern", entries: []string{"unix:/run/../*"}, addr: "unix:/etc"},
		{name: "unix NUL pattern", entries: []string{"unix:/run/\x00"}, addr: "unix:/run/x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := mustGate(t, manifest.Capabilities{NetBind: tc.entries}).NetBind(tc.addr)
			if tc.allow {
				if err != nil {
					t.Fatalf("denied: %v", err)
				}
				return
			}
			wantDenied(t, err, "net_bind", tc.fragment)
		})
	}
}
