package egress

import (
	"fmt"
	"net/netip"
	"strings"
)

// maxHostLen is the longest DNS name (RFC 1035) plus room for an IPv6 literal
// with brackets and a zone; anything longer is refused before parsing.
const maxHostLen = 253

// NormalizeHost returns the canonical spelling of a host so that the gate and
// CheckAddr judge what will really be connected:
//
//   - an IPv6 literal, with or without brackets, becomes its RFC 5952 form
//     without brackets (a zone is kept, so CheckAddr can refuse it);
//   - a name whose last label is a number is read as IPv4 the way browsers and
//     inet_aton read it (0x7f.1, 2130706433, 017700000001, 127.1, 0177.0.0.1
//     all become 127.0.0.1); if it does not parse as IPv4 it is refused, since
//     a resolver might read it either way;
//   - any other name is lower-cased, loses one trailing dot, and must be ASCII
//     letters, digits, '-' and '_' in dot-separated labels of 1 to 63 bytes.
//
// Errors wrap ErrInvalidAddress.
func NormalizeHost(host string) (string, error) {
	if host == "" {
		return "", fmt.Errorf("egress: empty host: %w", ErrInvalidAddress)
	}
	if len(host) > maxHostLen+2 {
		return "", fmt.Errorf("egress: host %.40q… is %d bytes, the limit is %d: %w", host, len(host), maxHostLen, ErrInvalidAddress)
	}
	if strings.HasPrefix(host, "[") || strings.Contains(host, ":") {
		return normalizeIPv6(host)
	}
	for i := 0; i < len(host); i++ {
		if host[i] > 0x7f {
			// Checked before lower-casing: Unicode case folding can turn a
			// non-ASCII rune into an ASCII letter (K, the Kelvin sign, becomes k).
			return "", fmt.Errorf("egress: host %q: non-ASCII name (use its punycode xn-- form): %w", host, ErrInvalidAddress)
		}
	}
	h := strings.ToLower(host)
	h = strings.TrimSuffix(h, ".") // the FQDN spelling names the same host
	if h == "" || len(h) > maxHostLen {
		return "", fmt.Errorf("egress: host %q: %w", host, ErrInvalidAddress)
	}
	labels := strings.Split(h, ".")
	if endsInNumber(labels[len(labels)-1]) {
		ip, ok := parseIPv4(labels)
		if !ok {
			return "", fmt.Errorf("egress: host %q ends in a number but is not an IPv4 address: %w", host, ErrInvalidAddress)
		}
		return ip.String(), nil
	}
	for _, l := range labels {
		if reason := badLabel(l); reason != "" {
			return "", fmt.Errorf("egress: host %q: %s: %w", host, reason, ErrInvalidAddress)
		}
	}
	return h, nil
}

func normalizeIPv6(host string) (string, error) {
	inner := host
	if strings.HasPrefix(host, "[") {
		if !strings.HasSuffix(host, "]") {
			return "", fmt.Errorf("egress: host %q: unbalanced bracket: %w", host, ErrInvalidAddress)
		}
		inner = host[1 : len(host)-1]
	}
	ip, err := netip.ParseAddr(inner)
	if err != nil || !ip.Is6() {
		return "", fmt.Errorf("egress: host %q is not an IPv6 address: %w", host, ErrInvalidAddress)
	}
	if zone := ip.Zone(); strings.Trim(zone, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != "" {
		// netip accepts any bytes in a zone; an interface name or index never
		// needs more than these, and anything else is smuggling.
		return "", fmt.Errorf("egress: host %q: zone %q is not an interface name: %w", host, zone, ErrInvalidAddress)
	}
	return ip.String(), nil
}

// endsInNumber is the WHATWG URL rule deciding that a host is meant as IPv4:
// its last label is all decimal digits, or 0x followed by hex digits.
func endsInNumber(label string) bool {
	if label == "" {
		return false
	}
	if rest, ok := strings.CutPrefix(label, "0x"); ok {
		return strings.IndexFunc(rest, func(r rune) bool { return !isHex(r) }) < 0
	}
	return strings.IndexFunc(label, func(r rune) bool { return r < '0' || r > '9' }) < 0
}

func isHex(r rune) bool {
	return (r >= '0' && r <= '9') || (r >= 'a' && r <= 'f')
}

// parseIPv4 reads one to four numeric parts (decimal, 0x-hex or 0-octal); the
// last part fills the remaining bytes, as inet_aton does. labels are already
// lower-case.
func parseIPv4(labels []string) (netip.Addr, bool) {
	if len(labels) > 4 {
		return netip.Addr{}, false
	}
	var out uint32
	for i, l := range labels {
		v, ok := parseIPv4Part(l)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(labels)-1 {
			if v > 0xff {
				return netip.Addr{}, false
			}
			out |= uint32(v) << (8 * (3 - i))
			continue
		}
		if v >= 1<<(8*(5-len(labels))) {
			return netip.Addr{}, false
		}
		out |= uint32(v)
	}
	return netip.AddrFrom4([4]byte{byte(out >> 24), byte(out >> 16), byte(out >> 8), byte(out)}), true
}

// parseIPv4Part parses one part into at most 32 bits; false on overflow or a
// digit outside the base.
func parseIPv4Part(s string) (uint64, bool) {
	base := uint64(10)
	switch {
	case strings.HasPrefix(s, "0x"):
		base, s = 16, s[2:]
		if s == "" {
			return 0, true // WHATWG reads a bare "0x" as zero
		}
	case len(s) > 1 && s[0] == '0':
		base, s = 8, s[1:]
	case s == "":
		return 0, false
	}
	var v uint64
	for _, c := range s {
		d := uint64(0xff)
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		}
		if d >= base {
			return 0, false
		}
		v = v*base + d
		if v > 0xffffffff {
			return 0, false
		}
	}
	return v, true
}

// badLabel says what is wrong with one DNS label, or "" if nothing is.
func badLabel(l string) string {
	if l == "" {
		return "empty label"
	}
	if len(l) > 63 {
		return "label longer than 63 bytes"
	}
	for _, c := range l {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
		default:
			return fmt.Sprintf("character %q not allowed in a host name", c)
		}
	}
	return ""
}
