package gate

import (
	"net"
	"path"
	"strconv"
	"strings"
)

// endpointGrant is one parsed `host:port` or `host:*` entry of net_connect or
// net_bind.
type endpointGrant struct {
	host    host
	anyPort bool
	port    int
}

func (g *Gate) parseEndpoints(capability string, written []string) []endpointGrant {
	var grants []endpointGrant
	for _, w := range written {
		gr, reason := parseEndpoint(w)
		if reason != "" {
			g.markInert(capability, w, reason)
			continue
		}
		grants = append(grants, gr)
	}
	return grants
}

// parseEndpoint reads `host:port` or `host:*`. An IPv6 host is written in
// brackets (`[::1]:443`) or, as upstream splits at the last colon, bare
// (`::1:443`). The host is a literal: no DNS wildcards.
func parseEndpoint(w string) (endpointGrant, string) {
	var hostPart, portPart string
	if strings.HasPrefix(w, "[") {
		end := strings.Index(w, "]")
		if end < 0 || !strings.HasPrefix(w[end+1:], ":") {
			return endpointGrant{}, "is not [ipv6]:port"
		}
		hostPart, portPart = w[:end+1], w[end+2:]
	} else {
		i := strings.LastIndex(w, ":")
		if i < 0 {
			return endpointGrant{}, "has no port (write host:port or host:*)"
		}
		hostPart, portPart = w[:i], w[i+1:]
	}
	if strings.Contains(hostPart, "*") {
		return endpointGrant{}, "has a wildcard host; hosts are literal (only the port may be *)"
	}
	h, reason := parseHost(hostPart)
	if reason != "" {
		return endpointGrant{}, reason
	}
	if portPart == "*" {
		return endpointGrant{host: h, anyPort: true}, ""
	}
	port, ok := parsePort(portPart)
	if !ok {
		return endpointGrant{}, "has a port that is neither * nor 0-65535"
	}
	return endpointGrant{host: h, port: port}, ""
}

// parsePort takes decimal digits without sign or leading zeros, 0 to 65535.
func parsePort(s string) (int, bool) {
	if s == "" || len(s) > 5 || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 65535 || s[0] == '+' || s[0] == '-' {
		return 0, false
	}
	return n, true
}

func matchEndpoint(grants []endpointGrant, h host, port int) bool {
	for _, gr := range grants {
		if gr.host.equal(h) && (gr.anyPort || gr.port == port) {
			return true
		}
	}
	return false
}

// NetConnect checks an outgoing TCP connection to host:port against
// net_connect. The host is compared as the capsule spelled it (case and a
// trailing dot aside): `localhost` and 127.0.0.1 are different entries. Port
// 0 asks only to resolve the name and is granted by `host:*` or `host:0`.
func (g *Gate) NetConnect(hostname string, port int) error {
	denied := func(reason string) error {
		return deny("net_connect", net.JoinHostPort(hostname, strconv.Itoa(port)), reason)
	}
	if port < 0 || port > 65535 {
		return denied("has a port outside 0-65535")
	}
	h, reason := parseHost(hostname)
	if reason != "" {
		return denied(reason)
	}
	if !matchEndpoint(g.netConnect, h, port) {
		return denied("is not in net_connect (" + list(g.caps.NetConnect) + ")")
	}
	return nil
}

// parseNetBind splits net_bind into Unix socket path patterns (`unix:` then
// `*` for any path, or an absolute path.Match pattern; `unix:///p` is read as
// `/p`) and TCP endpoints, which must name a loopback host.
func (g *Gate) parseNetBind(written []string) {
	for _, w := range written {
		pattern, isUnix := strings.CutPrefix(w, "unix:")
		if !isUnix {
			gr, reason := parseEndpoint(w)
			if reason == "" && !gr.host.loopback() {
				reason = "is not a loopback host; TCP binds are loopback only"
			}
			if reason != "" {
				g.markInert("net_bind", w, reason)
				continue
			}
			g.netBindTCP = append(g.netBindTCP, gr)
			continue
		}
		if strings.HasPrefix(pattern, "///") {
			pattern = pattern[2:]
		}
		abs, reason := g.runPath(pattern)
		if reason != "" {
			g.markInert("net_bind", w, reason)
			continue
		}
		pattern = abs
		if reason := unixPattern(pattern); reason != "" {
			g.markInert("net_bind", w, reason)
			continue
		}
		g.netBindUDS = append(g.netBindUDS, pattern)
	}
}

func unixPattern(p string) string {
	if p == "*" {
		return ""
	}
	if reason := oddity(p); reason != "" {
		return reason
	}
	if !strings.HasPrefix(p, "/") {
		return "is neither unix:* nor unix:<absolute path pattern>"
	}
	if _, reason := relClean(p[1:]); reason != "" {
		return reason
	}
	if _, err := path.Match(p, ""); err != nil {
		return "is not a valid path pattern"
	}
	return ""
}

func (h host) loopback() bool {
	return h.name == "localhost" || h.ip.IsLoopback()
}

// NetBind checks a listener address against net_bind: `unix:<absolute path>`
// against the unix: patterns (`*` in a pattern stays within one path
// component, except a pattern that is `*` alone), or `host:port` against the
// TCP entries, where the host must be localhost or a loopback address whatever
// the entries say. A unix: entry never grants a TCP bind, nor the reverse.
func (g *Gate) NetBind(addr string) error {
	addr = g.ResolveBind(addr)
	if p, ok := strings.CutPrefix(addr, "unix:"); ok {
		return g.netBindUnix(addr, p)
	}
	hostPart, portPart, err := net.SplitHostPort(addr)
	if err != nil {
		return deny("net_bind", addr, "is neither unix:<path> nor host:port")
	}
	port, ok := parsePort(portPart)
	if !ok {
		return deny("net_bind", addr, "has a port that is not 0-65535")
	}
	h, reason := parseHost(hostPart)
	if reason != "" {
		return deny("net_bind", addr, reason)
	}
	if !h.loopback() {
		return deny("net_bind", addr, "is not a loopback address; TCP binds are loopback only")
	}
	if !matchEndpoint(g.netBindTCP, h, port) {
		return deny("net_bind", addr, "is not in net_bind ("+list(g.caps.NetBind)+")")
	}
	return nil
}

func (g *Gate) netBindUnix(addr, p string) error {
	if reason := oddity(p); reason != "" {
		return deny("net_bind", addr, reason)
	}
	if !strings.HasPrefix(p, "/") {
		return deny("net_bind", addr, "is not an absolute socket path")
	}
	if _, reason := relClean(p[1:]); reason != "" {
		return deny("net_bind", addr, reason)
	}
	for _, pattern := range g.netBindUDS {
		if pattern == "*" {
			return nil
		}
		if ok, _ := path.Match(pattern, p); ok {
			return nil
		}
	}
	return deny("net_bind", addr, "is not in net_bind ("+list(g.caps.NetBind)+")")
}
