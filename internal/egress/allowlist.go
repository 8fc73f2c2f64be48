package egress

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// allowEntry is one operator-allowlisted local endpoint: an address range and
// a port (0 means any port).
type allowEntry struct {
	prefix netip.Prefix
	port   uint16
}

// allowlist is matched on the (IP, port) actually being connected, never on
// the name a capsule asked for, so a name that resolves somewhere else gains
// nothing from it.
type allowlist []allowEntry

// parseAllowLocal reads the operator's entries: "ip:port", "[ipv6]:port",
// "localhost:port" (127.0.0.1 and ::1), any of those with port "*", or a CIDR
// prefix (every port). Other host names are refused: an allowlist matched on
// addresses cannot honour a name without resolving it, and a resolved name is
// what rebinding attacks change.
func parseAllowLocal(entries []string) (allowlist, error) {
	var out allowlist
	for _, e := range entries {
		parsed, err := parseAllowEntry(e)
		if err != nil {
			return nil, fmt.Errorf("egress: allow-local entry %q: %w: %w", e, err, ErrInvalidAddress)
		}
		out = append(out, parsed...)
	}
	return out, nil
}

func parseAllowEntry(e string) ([]allowEntry, error) {
	if strings.Contains(e, "/") {
		p, err := netip.ParsePrefix(e)
		if err != nil {
			return nil, errors.New("not a CIDR prefix")
		}
		return []allowEntry{{prefix: unmapPrefix(p.Masked())}}, nil
	}
	host, portText, err := net.SplitHostPort(e)
	if err != nil {
		return nil, errors.New("want ip:port, [ipv6]:port, localhost:port or a CIDR prefix")
	}
	var port uint16
	if portText != "*" {
		n, err := strconv.ParseUint(portText, 10, 16)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("port %q is neither 1-65535 nor *", portText)
		}
		port = uint16(n)
	}
	if strings.EqualFold(host, "localhost") {
		return []allowEntry{
			{prefix: netip.MustParsePrefix("127.0.0.1/32"), port: port},
			{prefix: netip.MustParsePrefix("::1/128"), port: port},
		}, nil
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return nil, fmt.Errorf("host %q is not an IP address or localhost", host)
	}
	if ip.Zone() != "" {
		return nil, fmt.Errorf("scoped address %q: zones are not supported", host)
	}
	ip = ip.Unmap()
	return []allowEntry{{prefix: netip.PrefixFrom(ip, ip.BitLen()), port: port}}, nil
}

func unmapPrefix(p netip.Prefix) netip.Prefix {
	if p.Addr().Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p
}

// allows reports whether the operator allowlisted connecting to ip:port.
// Scoped addresses never match.
func (a allowlist) allows(ip netip.Addr, port uint16) bool {
	if ip.Zone() != "" {
		return false
	}
	ip = ip.Unmap()
	for _, e := range a {
		if (e.port == 0 || e.port == port) && e.prefix.Contains(ip) {
			return true
		}
	}
	return false
}

// CheckAllowLocal reports whether entry is an Options.AllowLocal entry that
// NewClient and NewDialer accept, so configuration validation can report a
// bad entry with its position instead of failing at boot.
func CheckAllowLocal(entry string) error {
	_, err := parseAllowLocal([]string{entry})
	return err
}
