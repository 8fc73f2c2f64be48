package egress

import (
	"net"
	"net/netip"
	"strings"
	"testing"
)

// inForbiddenRange is an independent oracle for CheckAddr, written against
// net.IP's classifiers and raw bytes rather than this package's tables. It
// covers the ranges the package promises to refuse; CheckAddr may refuse more
// (everything outside IPv6 global unicast), never less.
func inForbiddenRange(a netip.Addr) bool {
	ip := net.IP(a.WithZone("").AsSlice())
	if v4 := ip.To4(); v4 != nil { // plain IPv4 and IPv4-mapped IPv6
		return v4Forbidden(v4)
	}
	if ip.IsLoopback() || ip.IsUnspecified() || ip.IsMulticast() || ip.IsLinkLocalUnicast() || ip.IsPrivate() {
		return true
	}
	switch {
	case allZero(ip[:12]): // IPv4-compatible
		return true
	case ip[0] == 0x00 && ip[1] == 0x64 && ip[2] == 0xff && ip[3] == 0x9b:
		if allZero(ip[4:12]) { // 64:ff9b::/96
			return v4Forbidden(ip[12:16])
		}
		return ip[4] == 0 && ip[5] == 1 // 64:ff9b:1::/48
	case ip[0] == 0x20 && ip[1] == 0x02: // 6to4
		return v4Forbidden(ip[2:6])
	case ip[0] == 0x20 && ip[1] == 0x01 && ip[2] == 0 && ip[3] == 0: // Teredo
		client := net.IP{^ip[12], ^ip[13], ^ip[14], ^ip[15]}
		return v4Forbidden(ip[4:8]) || v4Forbidden(client)
	case ip[0] == 0xfe && ip[1]&0xc0 == 0xc0: // site-local
		return true
	case ip[0] == 0x20 && ip[1] == 0x01 && ip[2] == 0x0d && ip[3] == 0xb8: // documentation
		return true
	case ip[0] == 0x20 && ip[1] == 0x01 && ip[2] == 0 && ip[3] == 2 && ip[4] == 0 && ip[5] == 0: // benchmarking
		return true
	}
	return false
}

func v4Forbidden(b net.IP) bool {
	ip := net.IPv4(b[0], b[1], b[2], b[3])
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsMulticast() || ip.IsUnspecified() {
		return true
	}
	switch {
	case b[0] == 0, b[0] >= 240:
		return true
	case b[0] == 100 && b[1]&0xc0 == 64:
		return true
	case b[0] == 198 && b[1]&0xfe == 18:
		return true
	case b[0] == 192 && b[1] == 0 && (b[2] == 0 || b[2] == 2):
		return true
	case b[0] == 198 && b[1] == 51 && b[2] == 100, b[0] == 203 && b[1] == 0 && b[2] == 113:
		return true
	}
	return false
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

func TestOracleAgreesWithTheTables(t *testing.T) {
	// The oracle must itself be right on the named attack addresses, or the
	// fuzz targets prove nothing.
	for _, a := range []string{
		"127.0.0.1", "::ffff:127.0.0.1", "::127.0.0.1", "64:ff9b::7f00:1", "2002:7f00:1::",
		"2001:0:808:808:0:0:f5ff:fffe", "169.254.169.254", "fe80::1", "100.64.0.1",
		"224.0.0.1", "255.255.255.255", "10.0.0.1", "172.16.0.1", "192.168.1.1", "fd00::1",
		"0.0.0.0", "::", "198.18.0.1", "192.0.2.1", "2001:db8::1", "64:ff9b:1::1",
	} {
		if !inForbiddenRange(netip.MustParseAddr(a)) {
			t.Errorf("oracle misses %s", a)
		}
	}
	for _, a := range []string{"8.8.8.8", "2001:4860:4860::8888", "64:ff9b::808:808", "2002:808:808::"} {
		if inForbiddenRange(netip.MustParseAddr(a)) {
			t.Errorf("oracle refuses public %s", a)
		}
	}
}

func FuzzNormalizeHost(f *testing.F) {
	for _, s := range ssrfHosts {
		f.Add(s)
	}
	for _, s := range []string{
		"example.com", "Example.COM.", "0x", "0x7f.0x0.0x0.0x1", "1.2.3", "08.1", "4294967296",
		"[fe80::1%eth0]", "::ffff:1.2.3.4", "a..b", "xn--bcher-kva.example", "\u212aexample.com",
		"127.0.0.1%00", "1.1.1.1.", "[::ffff:0:7f00:1]", "0x100.0", "00000000000000000000000001",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := NormalizeHost(in)
		if err != nil {
			return
		}
		again, err := NormalizeHost(out)
		if err != nil || again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", in, out, again, err)
		}
		if ip, perr := netip.ParseAddr(out); perr == nil {
			if CheckAddr(ip) == nil && inForbiddenRange(ip) {
				t.Fatalf("%q normalises to %s, which CheckAddr accepts but lies in a forbidden range", in, ip)
			}
			if std, serr := netip.ParseAddr(strings.Trim(in, "[]")); serr == nil && std.String() != out {
				t.Fatalf("%q is a standard literal %s but normalises to %s", in, std, out)
			}
			return
		}
		// A name: nothing a resolver could read as an address may pass.
		labels := strings.Split(out, ".")
		if last := labels[len(labels)-1]; strings.Trim(last, "0123456789") == "" ||
			(strings.HasPrefix(last, "0x") && strings.Trim(last[2:], "0123456789abcdef") == "") {
			t.Fatalf("%q normalises to %q, which ends in a number", in, out)
		}
		if strings.Trim(out, "abcdefghijklmnopqrstuvwxyz0123456789-_.") != "" || len(out) > 253 {
			t.Fatalf("%q normalises to %q, which is not a plain ASCII name", in, out)
		}
	})
}

func FuzzCheckAddr(f *testing.F) {
	for _, a := range []string{"127.0.0.1", "::1", "2001:0:808:808:0:0:f5ff:fffe", "64:ff9b::a00:1", "2002:a00:1::", "8.8.8.8"} {
		f.Add(netip.MustParseAddr(a).AsSlice())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ip, ok := netip.AddrFromSlice(b)
		if !ok {
			return
		}
		if CheckAddr(ip) == nil && inForbiddenRange(ip) {
			t.Fatalf("CheckAddr accepts %s, which lies in a forbidden range", ip)
		}
	})
}
