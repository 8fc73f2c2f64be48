package gate

import (
	"net/netip"
	"strings"
)

// host is a parsed network host: exactly one of name and ip is set. Names are
// lower-cased without a trailing dot; IPv4-mapped IPv6 addresses are unmapped,
// so one endpoint has one spelling.
type host struct {
	name string
	ip   netip.Addr
}

func (h host) equal(o host) bool {
	if h.ip.IsValid() || o.ip.IsValid() {
		return h.ip == o.ip
	}
	return h.name == o.name
}

// maxHostBytes bounds a DNS name (253) plus a trailing dot and brackets.
const maxHostBytes = 256

// parseHost accepts an IP literal (IPv6 with or without brackets, no zone) or
// a DNS name in ASCII. It refuses names whose last label starts with a digit:
// no top-level domain does, and it is how odd IPv4 spellings (`0x7f.1`,
// `2130706433`, `127.1`) look, which a resolver might treat as addresses.
func parseHost(s string) (host, string) {
	switch {
	case s == "":
		return host{}, "has an empty host"
	case len(s) > maxHostBytes:
		return host{}, "has a host longer than 253 bytes"
	}
	literal := s
	if inner, ok := strings.CutPrefix(s, "["); ok {
		inner, ok = strings.CutSuffix(inner, "]")
		if !ok {
			return host{}, "has an unclosed [ in its host"
		}
		literal = inner
	}
	if ip, err := netip.ParseAddr(literal); err == nil {
		if ip.Zone() != "" {
			return host{}, "has an IPv6 zone, which is not allowed"
		}
		if literal != s && !ip.Is6() {
			return host{}, "has brackets around an IPv4 address"
		}
		return host{ip: ip.Unmap()}, ""
	}
	if literal != s {
		return host{}, "has brackets around something that is not an IPv6 address"
	}
	name, reason := hostName(s)
	if reason != "" {
		return host{}, reason
	}
	return host{name: name}, ""
}

// hostName lower-cases a DNS name, drops one trailing dot and checks its
// labels: 1 to 63 of [a-z0-9_-], at most 253 bytes in all.
func hostName(s string) (string, string) {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return "", "has a non-ASCII host (write IDNs in punycode, xn--…)"
		}
	}
	name := strings.TrimSuffix(strings.ToLower(s), ".")
	if len(name) > 253 {
		return "", "has a host longer than 253 bytes"
	}
	labels := strings.Split(name, ".")
	for _, label := range labels {
		if label == "" || len(label) > 63 {
			return "", "has a host with an empty or over-long label"
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", "has a host with a character other than letters, digits, - and _"
			}
		}
	}
	if last := labels[len(labels)-1]; last[0] < 'a' || last[0] > 'z' {
		return "", "has a host whose last label does not start with a letter (not a DNS name, nor a plain IP address)"
	}
	return name, ""
}
