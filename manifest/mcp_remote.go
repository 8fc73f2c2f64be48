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
	c.readOAuthGrant(t, s, checkRefs)
	c.readIdP(t, m, s, checkRefs)
	if mu, mv := t.str("oauth_client_metadata_url"); mv != nil {
		s.OAuthClientMetadataURL = mu
		switch err := CheckClientMetadataURL(mu); {
		case err != nil:
			c.errorf(mv.at, t.keyPath("oauth_client_metadata_url"), "mcp_server %q: oauth_client_metadata_url %q %v", s.ID, clip(mu), err)
		case s.OAuthClientID != "":
			c.errorf(mv.at, t.keyPath("oauth_client_metadata_url"), "mcp_server %q: oauth_client_metadata_url and oauth_client_id both name the client; keep one", s.ID)
		}
	}
}

// CheckClientMetadataURL checks a Client ID Metadata Document's URL: the
// authorization server fetches it, so it must be https with a path, no
// credentials or fragment, on a host that is not loopback, private,
// link-local (the cloud metadata address) or otherwise not public.
func CheckClientMetadataURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return errors.New("is not a URL")
	case u.Scheme != "https":
		return errors.New("must be an https:// URL (the authorization server fetches it)")
	case u.User != nil:
		return errors.New("carries credentials")
	case u.Fragment != "" || strings.Contains(s, "#"):
		return errors.New("has a #fragment")
	case u.Path == "" || u.Path == "/":
		return errors.New("needs a path naming the document")
	case u.Hostname() == "":
		return errors.New("has no host")
	}
	h := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return errors.New("names loopback; the authorization server must fetch it from a public host")
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		ip = ip.Unmap()
		if !ip.IsGlobalUnicast() || ip.IsPrivate() || ip.IsLoopback() || ip.IsLinkLocalUnicast() {
			return errors.New("names a loopback, private or link-local address; the authorization server must fetch it from a public host")
		}
	}
	return nil
}

// readOAuthGrant reads oauth_grant and oauth_client_key: the client
// credentials grant needs a client id and exactly one way to authenticate
// it, a secret or a signing key, each named as a capsule secret.
func (c *checker) readOAuthGrant(t *table, s *MCPServer, checkRefs func(at pos, key, what, v string)) {
	g, gv := t.str("oauth_grant")
	if gv != nil {
		switch g {
		case MCPGrantAuthorizationCode, MCPGrantClientCredentials, MCPGrantEnterprise:
			s.OAuthGrant = g
		default:
			c.errorf(gv.at, t.keyPath("oauth_grant"), "mcp_server %q: oauth_grant %q is not %q (a person logs in), %q (machine to machine) or %q (the person's enterprise IdP)", s.ID, clip(g), MCPGrantAuthorizationCode, MCPGrantClientCredentials, MCPGrantEnterprise)
		}
	}
	if k, kv := t.str("oauth_client_key"); kv != nil {
		s.OAuthClientKey = k
		_, refs, err := ParseTemplate(k)
		switch {
		case err != nil || len(refs) != 1 || refs[0].Kind != RefSecret || k != "${secret:"+refs[0].Key+"}":
			c.errorf(kv.at, t.keyPath("oauth_client_key"), "mcp_server %q: oauth_client_key must name a secret holding a PEM private key, as \"${secret:KEY}\", never hold one", s.ID)
		case s.OAuthClientSecret != "":
			c.errorf(kv.at, t.keyPath("oauth_client_key"), "mcp_server %q: oauth_client_key and oauth_client_secret both set; a client authenticates one way: keep one", s.ID)
		case s.OAuthGrant != MCPGrantClientCredentials:
			c.errorf(kv.at, t.keyPath("oauth_client_key"), "mcp_server %q: oauth_client_key signs the client credentials grant; add oauth_grant = %q", s.ID, MCPGrantClientCredentials)
		default:
			checkRefs(kv.at, t.keyPath("oauth_client_key"), "oauth_client_key", k)
		}
	}
	if s.OAuthGrant == MCPGrantEnterprise && s.OAuthClientID == "" {
		c.errorf(gv.at, t.keyPath("oauth_grant"), "mcp_server %q: the enterprise grant needs the client registered with the server's authorization server: add oauth_client_id", s.ID)
	}
	if s.OAuthGrant != MCPGrantClientCredentials {
		return
	}
	switch {
	case s.OAuthClientID == "":
		c.errorf(gv.at, t.keyPath("oauth_grant"), "mcp_server %q: the client credentials grant needs the client registered beforehand: add oauth_client_id", s.ID)
	case s.OAuthClientSecret == "" && s.OAuthClientKey == "":
		c.errorf(gv.at, t.keyPath("oauth_grant"), "mcp_server %q: the client credentials grant needs oauth_client_secret or oauth_client_key (as \"${secret:KEY}\")", s.ID)
	}
	if _, ok := headerFoldMap(s.Headers, "Authorization"); ok {
		c.errorf(gv.at, t.keyPath("oauth_grant"), "mcp_server %q: the manifest sends its own Authorization header; the client credentials grant would not be used", s.ID)
	}
}

// readIdP reads the idp_* keys of the enterprise grant: all four but
// idp_client_secret are needed with it and none is taken without it; the
// IdP's host must be in net, and its secrets named as secrets.
func (c *checker) readIdP(t *table, m *Manifest, s *MCPServer, checkRefs func(at pos, key, what, v string)) {
	ent := s.OAuthGrant == MCPGrantEnterprise
	keys := []struct {
		key    string
		dst    *string
		secret bool
	}{
		{"idp_issuer", &s.IdPIssuer, false}, {"idp_client_id", &s.IdPClientID, false},
		{"idp_client_secret", &s.IdPClientSecret, true}, {"idp_id_token", &s.IdPIDToken, true},
	}
	for _, k := range keys {
		v, vv := t.str(k.key)
		if vv == nil {
			if ent && k.key != "idp_client_secret" {
				c.errorf(t.get("oauth_grant").at, t.keyPath("oauth_grant"), "mcp_server %q: oauth_grant = %q needs %s", s.ID, MCPGrantEnterprise, k.key)
			}
			continue
		}
		*k.dst = v
		if !ent {
			c.errorf(vv.at, t.keyPath(k.key), "mcp_server %q: %s is for the enterprise grant; add oauth_grant = %q", s.ID, k.key, MCPGrantEnterprise)
			continue
		}
		switch {
		case k.key == "idp_issuer":
			if pu, err := CheckMCPURL(v); err != nil {
				c.errorf(vv.at, t.keyPath(k.key), "mcp_server %q: idp_issuer %q %v", s.ID, clip(v), err)
			} else if !netGrants(m.Capabilities.Net, pu.Hostname()) {
				c.errorf(vv.at, t.keyPath(k.key), "mcp_server %q: the IdP %s is not granted by capabilities.net; add %q there", s.ID, pu.Hostname(), pu.Hostname())
			}
		case k.secret:
			if _, refs, err := ParseTemplate(v); err == nil && (len(refs) != 1 || refs[0].Kind != RefSecret || v != "${secret:"+refs[0].Key+"}") {
				c.errorf(vv.at, t.keyPath(k.key), "mcp_server %q: %s must name a secret, as \"${secret:KEY}\", never hold one", s.ID, k.key)
			} else {
				checkRefs(vv.at, t.keyPath(k.key), k.key, v)
			}
		default:
			checkRefs(vv.at, t.keyPath(k.key), k.key, v)
		}
	}
}

func headerFoldMap(h map[string]string, name string) (string, bool) {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

func containsFold(list []string, s string) bool {
	for _, l := range list {
		if strings.EqualFold(l, s) {
			return true
		}
	}
	return false
}
