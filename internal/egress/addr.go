package egress

import (
	"fmt"
	"net/netip"
)

// block is one refused range and the reason given when an address falls in it.
type block struct {
	prefix netip.Prefix
	reason string
}

func mustBlocks(pairs ...string) []block {
	out := make([]block, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		p := netip.MustParsePrefix(pairs[i])
		out = append(out, block{prefix: p, reason: pairs[i+1] + " (" + p.String() + ")"})
	}
	return out
}

// blocked4 lists the IPv4 ranges of the IANA special-purpose registry that are
// not globally reachable, plus the documentation and benchmarking ranges:
// nothing legitimate lives there, and a capsule aiming at them is probing.
// More specific entries come first so the reason is the most precise one.
var blocked4 = mustBlocks(
	"0.0.0.0/32", "unspecified",
	"0.0.0.0/8", `"this network"`,
	"10.0.0.0/8", "private-use",
	"100.64.0.0/10", "shared address space (CGNAT)",
	"127.0.0.0/8", "loopback",
	"169.254.0.0/16", "link-local (cloud metadata lives here)",
	"172.16.0.0/12", "private-use",
	"192.0.0.0/24", "IETF protocol assignments",
	"192.0.2.0/24", "documentation (TEST-NET-1)",
	"192.88.99.0/24", "deprecated 6to4 relay anycast",
	"192.168.0.0/16", "private-use",
	"198.18.0.0/15", "benchmarking",
	"198.51.100.0/24", "documentation (TEST-NET-2)",
	"203.0.113.0/24", "documentation (TEST-NET-3)",
	"224.0.0.0/4", "multicast",
	"255.255.255.255/32", "limited broadcast",
	"240.0.0.0/4", "reserved",
)

// globalUnicast6 is the only IPv6 space handed out for the public Internet;
// everything outside it is refused unless it is one of the transition forms
// decoded below.
var globalUnicast6 = netip.MustParsePrefix("2000::/3")

// named6 gives precise reasons for well-known ranges outside 2000::/3.
var named6 = mustBlocks(
	"::/128", "unspecified",
	"::1/128", "loopback",
	"100::/64", "discard-only",
	"fc00::/7", "unique local (ULA)",
	"fe80::/10", "link-local",
	"fec0::/10", "site-local (deprecated)",
	"ff00::/8", "multicast",
)

// blockedInGlobal6 lists ranges inside 2000::/3 that are not globally
// reachable.
var blockedInGlobal6 = mustBlocks(
	"2001:2::/48", "benchmarking",
	"2001:10::/28", "ORCHID (deprecated)",
	"2001:20::/28", "ORCHIDv2",
	"2001:db8::/32", "documentation",
	"3fff::/20", "documentation",
)

var (
	compat6    = netip.MustParsePrefix("::/96")
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour  = netip.MustParsePrefix("2002::/16")
	teredo     = netip.MustParsePrefix("2001::/32")
)

// CheckAddr reports whether ip may be connected to. It refuses loopback,
// private, link-local, multicast, unspecified, shared (CGNAT), benchmarking,
// documentation, reserved and broadcast addresses, every IPv6 address outside
// global unicast, scoped (zoned) addresses, and the IPv6 forms that embed an
// IPv4 address (mapped, NAT64, 6to4, Teredo) when the embedded address would
// be refused. IPv4-compatible IPv6 (::a.b.c.d, deprecated) and local-use NAT64
// (64:ff9b:1::/48, whose embedding depends on the operator's prefix length) are
// refused whatever they embed. The error is an *AddrError wrapping
// ErrForbiddenAddress.
func CheckAddr(ip netip.Addr) error {
	if reason := forbidden(ip); reason != "" {
		return fmt.Errorf("egress: %w", &AddrError{Addr: ip, Reason: reason})
	}
	return nil
}

// forbidden returns why ip must not be reached, or "" if it may.
func forbidden(ip netip.Addr) string {
	if !ip.IsValid() {
		return "not a valid IP address"
	}
	zone := ip.Zone()
	ip = ip.WithZone("")
	reason := ""
	switch {
	case ip.Is4():
		reason = forbidden4(ip)
	case ip.Is4In6():
		reason = embedded("IPv4-mapped IPv6", ip.Unmap())
	default:
		reason = forbidden6(ip)
	}
	if reason == "" && zone != "" {
		// A zone only means something for link-scoped addresses; on any other
		// address it is a spelling trick, so it is refused outright.
		reason = "scoped address (zone " + zone + ")"
	}
	return reason
}

func forbidden4(ip netip.Addr) string {
	for _, b := range blocked4 {
		if b.prefix.Contains(ip) {
			return b.reason
		}
	}
	return ""
}

func forbidden6(ip netip.Addr) string {
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		return embedded("NAT64 (64:ff9b::/96)", netip.AddrFrom4([4]byte(b[12:16])))
	case nat64Local.Contains(ip):
		return "local-use NAT64 (64:ff9b:1::/48), whose embedded IPv4 address depends on the local prefix length"
	case sixToFour.Contains(ip):
		return embedded("6to4 (2002::/16)", netip.AddrFrom4([4]byte(b[2:6])))
	case teredo.Contains(ip):
		if r := embedded("Teredo (2001::/32) server", netip.AddrFrom4([4]byte(b[4:8]))); r != "" {
			return r
		}
		// Teredo stores the client's IPv4 address with every bit inverted.
		client := [4]byte{^b[12], ^b[13], ^b[14], ^b[15]}
		return embedded("Teredo (2001::/32) client", netip.AddrFrom4(client))
	}
	for _, blk := range named6 {
		if blk.prefix.Contains(ip) {
			return blk.reason
		}
	}
	if compat6.Contains(ip) {
		return "IPv4-compatible IPv6 (::/96, deprecated) embedding " + netip.AddrFrom4([4]byte(b[12:16])).String()
	}
	if !globalUnicast6.Contains(ip) {
		return "not IPv6 global unicast (outside 2000::/3)"
	}
	for _, blk := range blockedInGlobal6 {
		if blk.prefix.Contains(ip) {
			return blk.reason
		}
	}
	return ""
}

// embedded returns why the IPv4 address v4, carried inside an IPv6 form, must
// not be reached, or "" if it may.
func embedded(form string, v4 netip.Addr) string {
	if r := forbidden4(v4); r != "" {
		return form + " embedding " + v4.String() + ", " + r
	}
	return ""
}
