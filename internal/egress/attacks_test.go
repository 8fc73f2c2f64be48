package egress

import (
	"net"
	"net/netip"
	"net/url"
	"testing"
)

// ssrfHosts are URL hosts that must never be connected to, each spelled the
// way an attacker would put it in a URL. Names are answered by attackDNS.
var ssrfHosts = []string{
	"127.0.0.1",
	"localhost",
	"LOCALHOST.",
	"0x7f.1",
	"2130706433",
	"017700000001",
	"127.1",
	"0177.0.0.1",
	"0x7f000001",
	"[::1]",
	"[::ffff:127.0.0.1]",
	"[::ffff:7f00:1]",
	"[::127.0.0.1]",
	"[64:ff9b::7f00:1]",
	"[2002:7f00:1::]",
	"[2001:0:808:808:0:0:f5ff:fffe]", // Teredo, client 10.0.0.1
	"[2001:0:a9fe:a9fe::1]",          // Teredo, server 169.254.169.254
	"0.0.0.0",
	"0",
	"[::]",
	"169.254.169.254",
	"0xa9.0376.43518", // 169.254.169.254
	"[fe80::1%25eth0]",
	"100.64.0.1",
	"224.0.0.1",
	"255.255.255.255",
	"10.0.0.1",
	"172.16.0.1",
	"192.168.1.1",
	"[fd00::1]",
	"internal.example",   // resolves to 10.0.0.1
	"mixed.example",      // resolves to a public and a private address
	"mixed6.example",     // the same over IPv6
	"metadata.example",   // resolves to 169.254.169.254
	"mapped.example",     // answers with ::ffff:127.0.0.1
	"rebind-lan.example", // resolves to 192.168.0.10
}

func attackDNS() map[string][]string {
	return map[string][]string{
		"localhost":          {"127.0.0.1", "::1"},
		"internal.example":   {"10.0.0.1"},
		"mixed.example":      {"93.184.216.34", "10.0.0.1"},
		"mixed6.example":     {"2606:4700::1111", "fd00::1"},
		"metadata.example":   {"169.254.169.254"},
		"mapped.example":     {"::ffff:127.0.0.1"},
		"rebind-lan.example": {"192.168.0.10"},
		"public.example":     {"93.184.216.34"},
	}
}

// publicRoutes make the public addresses of attackDNS reachable through the
// fake network, so a guard that let a request through would visibly succeed.
func publicRoutes() map[string]string {
	return map[string]string{
		"93.184.216.34:80":     "",
		"[2606:4700::1111]:80": "",
	}
}

// dialAddress turns a URL host into the "host:port" a dialer is handed.
func dialAddress(t *testing.T, urlHost string, port string) string {
	t.Helper()
	u, err := url.Parse("http://" + urlHost + "/")
	if err != nil {
		t.Fatalf("test bug: %q: %v", urlHost, err)
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// assertNothingForbiddenDialled fails if the fake network was ever offered an
// address CheckAddr refuses.
func assertNothingForbiddenDialled(t *testing.T, fn *fakeNet, allowed ...string) {
	t.Helper()
	for _, a := range fn.addresses() {
		ap, err := netip.ParseAddrPort(a)
		if err != nil {
			t.Errorf("dialler was offered a non-literal address %q", a)
			continue
		}
		if CheckAddr(ap.Addr()) != nil && !contains(allowed, a) {
			t.Errorf("dialler was offered forbidden address %s", a)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
