package gate

import (
	"testing"

	"github.com/astrid-go/astrid/manifest"
)

type hostCase struct {
	name  string
	net   []string
	host  string
	allow bool
}

func runNet(t *testing.T, cases []hostCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := mustGate(t, manifest.Capabilities{Net: tc.net}).Net(tc.host)
			if tc.allow {
				if err != nil {
					t.Fatalf("denied: %v", err)
				}
				return
			}
			wantDenied(t, err, "net")
		})
	}
}

// TestNetUpstream is upstream's test_manifest_security_gate_http; the URL
// case passes the host the URL parser extracts, and the whole URL as a host.
func TestNetUpstream(t *testing.T) {
	gh := []string{"api.github.com"}
	runNet(t, []hostCase{
		{name: "exact", net: gh, host: "api.github.com", allow: true},
		{name: "subdomain", net: gh, host: "v1.api.github.com", allow: true},
		{name: "other host", net: gh, host: "evil.com"},
		{name: "userinfo trick: the host is the IP", net: gh, host: "127.0.0.1"},
		{name: "userinfo trick: a URL is no host", net: gh, host: "http://api.github.com@127.0.0.1/admin"},
		{name: "parent domain", net: gh, host: "github.com"},
		{name: "star allows any", net: []string{"*"}, host: "evil.com", allow: true},
	})
}

// TestNetSemantics covers what this gate adds: case, trailing dots,
// subdomain-only wildcards, IP entries.
func TestNetSemantics(t *testing.T) {
	ex := []string{"example.com"}
	runNet(t, []hostCase{
		{name: "upper-case request", net: ex, host: "EXAMPLE.com", allow: true},
		{name: "upper-case entry", net: []string{"Example.COM"}, host: "example.com", allow: true},
		{name: "trailing dot request", net: ex, host: "example.com.", allow: true},
		{name: "trailing dot entry", net: []string{"example.com."}, host: "www.example.com", allow: true},
		{name: "wildcard subdomain", net: []string{"*.example.com"}, host: "a.example.com", allow: true},
		{name: "wildcard deep subdomain", net: []string{"*.example.com"}, host: "a.b.example.com", allow: true},
		{name: "wildcard excludes apex", net: []string{"*.example.com"}, host: "example.com"},
		{name: "IP entry", net: []string{"10.0.0.5"}, host: "10.0.0.5", allow: true},
		{name: "IP entry, mapped request", net: []string{"10.0.0.5"}, host: "::ffff:10.0.0.5", allow: true},
		{name: "IPv6 entry, bracketed request", net: []string{"2001:db8::1"}, host: "[2001:db8::1]", allow: true},
		{name: "IPv6 entry bracketed", net: []string{"[2001:db8::1]"}, host: "2001:db8::1", allow: true},
		{name: "star allows IP", net: []string{"*"}, host: "93.184.216.34", allow: true},
		{name: "underscore label", net: ex, host: "_dmarc.example.com", allow: true},
		{name: "empty net", host: "example.com"},
	})
}

// TestNetAttacks: near misses of an `example.com` grant, entries that must
// not match anything, and hosts that are not hosts. All denied.
func TestNetAttacks(t *testing.T) {
	ex := []string{"example.com"}
	runNet(t, []hostCase{
		{name: "hyphen prefix", net: ex, host: "evil-example.com"},
		{name: "glued prefix", net: ex, host: "evilexample.com"},
		{name: "as a subdomain of evil", net: ex, host: "example.com.evil.com"},
		{name: "as a subdomain of evil, trailing dot", net: ex, host: "example.com.evil.com."},
		{name: "upper-case evil", net: ex, host: "EVIL-EXAMPLE.COM"},
		{name: "other TLD", net: ex, host: "example.co"},
		{name: "two trailing dots", net: ex, host: "example.com.."},
		{name: "leading dot", net: ex, host: ".example.com"},
		{name: "empty label", net: ex, host: "a..example.com"},
		{name: "with port", net: ex, host: "example.com:443"},
		{name: "with userinfo", net: ex, host: "user@example.com"},
		{name: "space", net: ex, host: "example.com "},
		{name: "NUL", net: ex, host: "example.com\x00.evil.com"},
		{name: "non-ASCII look-alike", net: ex, host: "exаmple.com"},
		{name: "public IP literal", net: ex, host: "93.184.216.34"},
		{name: "loopback literal", net: ex, host: "127.0.0.1"},
		{name: "IPv6 loopback", net: ex, host: "[::1]"},
		{name: "decimal IPv4", net: []string{"*"}, host: "2130706433"},
		{name: "hex IPv4", net: []string{"*"}, host: "0x7f.1"},
		{name: "octal IPv4", net: []string{"*"}, host: "017700000001"},
		{name: "short IPv4", net: []string{"*"}, host: "127.1"},
		{name: "zone", net: []string{"*"}, host: "fe80::1%eth0"},
		{name: "bracketed IPv4", net: []string{"*"}, host: "[10.0.0.1]"},
		{name: "unclosed bracket", net: []string{"*"}, host: "[::1"},
		{name: "brackets around a name", net: []string{"*"}, host: "[example.com]"},
		{name: "empty host", net: []string{"*"}, host: ""},
		{name: "over-long host", net: []string{"*"}, host: longHost(300)},
		{name: "254-byte name", net: []string{"*"}, host: longHost(254)},
		{name: "over-long label", net: []string{"*"}, host: longHost(64) + ".com"},
		{name: "IP entry is not a suffix", net: []string{"0.0.5"}, host: "10.0.0.5"},
		{name: "IP entry vs neighbour", net: []string{"10.0.0.5"}, host: "110.0.0.5"},
		{name: "URL entry", net: []string{"https://example.com"}, host: "example.com"},
		{name: "URL entry with path", net: []string{"example.com/api"}, host: "example.com"},
		{name: "entry with port", net: []string{"example.com:443"}, host: "example.com"},
		{name: "entry with userinfo", net: []string{"me@example.com"}, host: "example.com"},
		{name: "inner wildcard entry", net: []string{"api.*.com"}, host: "api.example.com"},
		{name: "glued wildcard entry", net: []string{"*example.com"}, host: "evilexample.com"},
		{name: "wildcard IP entry", net: []string{"*.10.0.0.5"}, host: "10.0.0.5"},
		{name: "empty entry", net: []string{""}, host: "example.com."},
	})
}

func longHost(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a'
	}
	return string(b)
}
