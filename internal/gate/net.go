package gate

import (
	"strings"
)

// hostGrant is one parsed `net` entry.
type hostGrant struct {
	any            bool // `*`
	subdomainsOnly bool // `*.example.com`
	host           host
}

func (g *Gate) parseNet(written []string) {
	for _, w := range written {
		gr, reason := parseHostGrant(w)
		if reason != "" {
			g.markInert("net", w, reason)
			continue
		}
		g.net = append(g.net, gr)
	}
}

// parseHostGrant reads one `net` entry. Entries are hosts, not URLs: anything
// with a scheme, path, port or userinfo matches nothing rather than being
// guessed at.
func parseHostGrant(w string) (hostGrant, string) {
	if w == "*" {
		return hostGrant{any: true}, ""
	}
	if strings.ContainsAny(w, "/@?#") {
		return hostGrant{}, "is shaped like a URL; net lists host names"
	}
	gr := hostGrant{}
	if rest, ok := strings.CutPrefix(w, "*."); ok {
		gr.subdomainsOnly, w = true, rest
	}
	if strings.Contains(w, "*") {
		return hostGrant{}, "`*` is allowed only alone or as a leading `*.`"
	}
	h, reason := parseHost(w)
	switch {
	case reason != "" && strings.Contains(w, ":"):
		return hostGrant{}, "is not a host name (net takes no ports; use net_connect for host:port)"
	case reason != "":
		return hostGrant{}, reason
	case gr.subdomainsOnly && h.ip.IsValid():
		return hostGrant{}, "an IP address has no subdomains"
	}
	gr.host = h
	return gr, ""
}

// Net checks an HTTP request's host (as in a URL, IPv6 with or without
// brackets, no port) against `net`: an entry grants its host and every
// subdomain, `*.example.com` only the subdomains, `*` any host. Names compare
// case-insensitively and a trailing dot is ignored; an IP address matches
// only an entry with the same address. Whether the address is safe to reach
// is internal/egress's question, asked after this one.
func (g *Gate) Net(hostname string) error {
	h, reason := parseHost(hostname)
	if reason != "" {
		return deny("net", hostname, reason)
	}
	for _, gr := range g.net {
		if gr.matches(h) {
			return nil
		}
	}
	return deny("net", hostname, "is not in net ("+list(g.caps.Net)+")")
}

func (gr hostGrant) matches(h host) bool {
	switch {
	case gr.any:
		return true
	case gr.host.ip.IsValid() || h.ip.IsValid():
		return gr.host.equal(h)
	case strings.HasSuffix(h.name, "."+gr.host.name):
		return true
	}
	return !gr.subdomainsOnly && h.name == gr.host.name
}
