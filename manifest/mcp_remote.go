package manifest

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// MCP server types. Only these get an engine; any other type is warned
// about and starts nothing.
const (
	MCPStdio = "stdio"
	// MCPHTTP is the streamable HTTP transport, falling back to the older
	// HTTP+SSE one when the server only speaks that.
	MCPHTTP = "http"
	// MCPSSE is the older HTTP+SSE transport (protocol 2024-11-05) alone.
	MCPSSE = "sse"
)

// Remote reports whether the server is reached over the network (http or
// sse) rather than started as a process.
func (s MCPServer) Remote() bool { return s.Type == MCPHTTP || s.Type == MCPSSE }

// Runs reports whether the server gets an engine.
func (s MCPServer) Runs() bool { return s.Type == MCPStdio || s.Remote() }

// MaxMCPHeaders bounds the headers of one remote MCP server.
const MaxMCPHeaders = 32

// Template references in a remote MCP server's header values and OAuth
// client fields: ${secret:KEY} is a secret [env] value, ${env:KEY} any
// [env] value of the capsule.
const (
	RefSecret = "secret"
	RefEnv    = "env"
)

// TemplateRef is one ${kind:KEY} reference in a template.
type TemplateRef struct {
	Kind string // RefSecret or RefEnv
	Key  string
}

// errTemplate is wrapped by every template syntax error.
var errTemplate = errors.New("invalid ${…} reference")

// maxTemplate bounds a template's length (a header value).
const maxTemplate = 8 << 10

// ParseTemplate splits a template into its literal text and its ${kind:KEY}
// references: lits has one more element than refs, and the expansion is
// lits[0] + value(refs[0]) + lits[1] + … A "$$" is a literal "$"; a "$"
// followed by anything else but "{" or "$" is literal as well.
func ParseTemplate(s string) (lits []string, refs []TemplateRef, err error) {
	if len(s) > maxTemplate {
		return nil, nil, fmt.Errorf("%w: the value is %d bytes, over %d", errTemplate, len(s), maxTemplate)
	}
	var lit strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 >= len(s) {
			lit.WriteByte(c)
			continue
		}
		switch s[i+1] {
		case '$':
			lit.WriteByte('$')
			i++
			continue
		case '{':
		default:
			lit.WriteByte(c)
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return nil, nil, fmt.Errorf("%w: %q has no closing }", errTemplate, clip(s[i:]))
		}
		body := s[i+2 : i+end]
		kind, key, ok := strings.Cut(body, ":")
		if !ok || (kind != RefSecret && kind != RefEnv) {
			return nil, nil, fmt.Errorf("%w: ${%s}: write ${secret:KEY} or ${env:KEY}", errTemplate, clip(body))
		}
		if !validEnvKey(key) {
			return nil, nil, fmt.Errorf("%w: ${%s}: %q is not an [env] key (ASCII letters, digits, '_', '-', '.')", errTemplate, clip(body), clip(key))
		}
		lits = append(lits, lit.String())
		lit.Reset()
		refs = append(refs, TemplateRef{Kind: kind, Key: key})
		i += end
	}
	return append(lits, lit.String()), refs, nil
}

// ExpandTemplate fills a template's references from values (the capsule's
// [env] values, secrets unsealed). A reference without a value is an error
// naming the key, never the values.
func ExpandTemplate(s string, values map[string]string) (string, error) {
	lits, refs, err := ParseTemplate(s)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i, r := range refs {
		b.WriteString(lits[i])
		v, ok := values[r.Key]
		if !ok || v == "" {
			return "", fmt.Errorf("${%s:%s} has no value: set it with `astrid capsule env set <capsule> %s`", r.Kind, r.Key, r.Key)
		}
		b.WriteString(v)
	}
	b.WriteString(lits[len(lits)-1])
	return b.String(), nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

func validEnvKey(k string) bool {
	if k == "" || len(k) > 128 {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// validHeaderName is RFC 9110's token.
func validHeaderName(n string) bool {
	if n == "" || len(n) > 256 {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// reservedHeaders are set by the MCP transport itself.
var reservedHeaders = []string{"content-type", "accept", "mcp-session-id", "mcp-protocol-version", "last-event-id", "host", "content-length", "transfer-encoding", "connection"}

// CheckMCPURL checks a remote MCP server's url: absolute http(s) with a
// host, no userinfo (credentials go in headers), no fragment.
func CheckMCPURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, fmt.Errorf("is not a URL: %v", err)
	case u.Scheme != "https" && u.Scheme != "http":
		return nil, fmt.Errorf("must be an http:// or https:// URL, not %q", u.Scheme)
	case u.Host == "" || u.Hostname() == "":
		return nil, errors.New("has no host")
	case u.User != nil:
		return nil, errors.New("carries credentials (user@); send them in headers, e.g. Authorization = \"Bearer ${secret:TOKEN}\"")
	case u.Fragment != "":
		return nil, errors.New("has a #fragment, which a server never sees")
	}
	return u, nil
}

// netGrants reports whether the `net` capability names host the way the
// gate matches it: an entry grants its host and every subdomain,
// `*.example.com` only the subdomains, `*` any host, an IP only itself.
func netGrants(net []string, host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	ip, ipErr := netip.ParseAddr(strings.Trim(host, "[]"))
	for _, w := range net {
		w = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(w)), ".")
		if w == "*" {
			return true
		}
		sub := false
		if rest, ok := strings.CutPrefix(w, "*."); ok {
			sub, w = true, rest
		}
		if gip, err := netip.ParseAddr(strings.Trim(w, "[]")); err == nil || ipErr == nil {
			if err == nil && ipErr == nil && !sub && gip.Unmap() == ip.Unmap() {
				return true
			}
			continue
		}
		if strings.HasSuffix(host, "."+w) || (!sub && host == w) {
			return true
		}
	}
	return false
}

// readRemoteMCP reads and checks the fields of an http or sse server.
func (c *checker) readRemoteMCP(t *table, m *Manifest, s *MCPServer, cv *value) {
	u, uv := t.str("url")
	s.URL = u
	switch {
	case uv == nil && !t.has("url"):
		c.errorf(t.v.at, t.keyPath("url"), "mcp_server %q is %s but has no url; add url = \"https://…\"", s.ID, s.Type)
	case uv != nil:
		pu, err := CheckMCPURL(u)
		if err != nil {
			c.errorf(uv.at, t.keyPath("url"), "mcp_server %q: url %q %v", s.ID, clip(u), err)
		} else if !netGrants(m.Capabilities.Net, pu.Hostname()) {
			c.errorf(uv.at, t.keyPath("url"), "mcp_server %q connects to %s, which capabilities.net does not grant; add %q there", s.ID, pu.Hostname(), pu.Hostname())
		}
	}
	if cv != nil {
		c.warnf(cv.at, t.keyPath("command"), "mcp_server %q is %s: command has no effect (only a stdio server runs one)", s.ID, s.Type)
	}
	if s.Args != nil {
		c.warnf(t.get("args").at, t.keyPath("args"), "mcp_server %q is %s: args have no effect", s.ID, s.Type)
	}
	envType := map[string]string{}
	for _, e := range m.Env {
		envType[e.Key] = e.Type
	}
	checkRefs := func(at pos, key, what, v string) {
		_, refs, err := ParseTemplate(v)
		if err != nil {
			c.errorf(at, key, "mcp_server %q: %s: %v", s.ID, what, err)
			return
		}
		for _, r := range refs {
			typ, ok := envType[r.Key]
			switch {
			case !ok:
				c.errorf(at, key, "mcp_server %q: %s names ${%s:%s}, which [env] does not declare; add [env.%s]", s.ID, what, r.Kind, r.Key, r.Key)
			case r.Kind == RefSecret && typ != EnvSecret:
				c.errorf(at, key, "mcp_server %q: %s names ${secret:%s}, but [env.%s] is not type = \"secret\"; use ${env:%s} or make it a secret", s.ID, what, r.Key, r.Key, r.Key)
			}
		}
	}
	if hv := t.get("headers"); hv != nil {
		if t.typed("headers", hv, kindTable) {
			ht := c.table(hv, t.keyPath("headers"))
			s.Headers = map[string]string{}
			for _, name := range hv.keys {
				val, vv := ht.str(name)
				if vv == nil {
					continue
				}
				at := vv.keyAt
				if at.line == 0 {
					at = vv.at
				}
				switch {
				case !validHeaderName(name):
					c.errorf(at, ht.keyPath(name), "mcp_server %q: %q is not a valid header name", s.ID, clip(name))
					continue
				case containsFold(reservedHeaders, name):
					c.errorf(at, ht.keyPath(name), "mcp_server %q: header %s is set by the MCP transport and cannot be configured", s.ID, name)
					continue
				case strings.ContainsAny(val, "\r\n\x00"):
					c.errorf(vv.at, ht.keyPath(name), "mcp_server %q: header %s holds a line break or NUL", s.ID, name)
					continue
				}
				checkRefs(vv.at, ht.keyPath(name), "header "+name, val)
				s.Headers[name] = val
			}
			if len(s.Headers) > MaxMCPHeaders {
				c.errorf(hv.at, t.keyPath("headers"), "mcp_server %q has %d headers, more than %d", s.ID, len(s.Headers), MaxMCPHeaders)
			}
		}
	}
	if id, iv := t.str("oauth_client_id"); iv != nil {
		s.OAuthClientID = id
		checkRefs(iv.at, t.keyPath("oauth_client_id"), "oauth_client_id", id)
	}
	if sec, sv := t.str("oauth_client_secret"); sv != nil {
		s.OAuthClientSecret = sec
		if _, refs, err := ParseTemplate(sec); err == nil && (len(refs) != 1 || refs[0].Kind != RefSecret) {
			c.errorf(sv.at, t.keyPath("oauth_client_secret"), "mcp_server %q: oauth_client_secret must name a secret, as \"${secret:KEY}\", never hold one", s.ID)
		} else {
			checkRefs(sv.at, t.keyPath("oauth_client_secret"), "oauth_client_secret", sec)
		}
		if s.OAuthClientID == "" {
			c.errorf(sv.at, t.keyPath("oauth_client_secret"), "mcp_server %q: oauth_client_secret without oauth_client_id", s.ID)
		}
	}
}

func containsFold(list []string, s string) bool {
	for _, l := range list {
		if strings.EqualFold(l, s) {
			return true
		}
	}
	return false
}
