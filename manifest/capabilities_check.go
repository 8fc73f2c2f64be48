package manifest

import (
	"fmt"
	"strconv"
	"strings"
)

// readCapabilities reads [capabilities] and merges each component's.
func (c *checker) readCapabilities(top *table, m *Manifest) {
	var caps Capabilities
	if t := top.sub("capabilities"); t != nil {
		caps = c.readCaps(t)
	}
	for _, comp := range m.Components {
		caps.Merge(comp.Capabilities)
	}
	m.Capabilities = caps
}

// readCaps reads one capabilities table: [capabilities] or a component's.
func (c *checker) readCaps(t *table) Capabilities {
	var caps Capabilities
	caps.Uplink, _ = t.boolean("uplink")
	var at []*value
	caps.Net, at = t.strs("net")
	for i, s := range caps.Net {
		c.checkNet(t, "net", s, at[i])
	}
	caps.NetBind, at = t.strs("net_bind")
	for i, s := range caps.NetBind {
		if !strings.HasPrefix(s, "unix:") {
			c.checkHostPort(t, "net_bind", s, at[i])
		}
	}
	caps.NetConnect, at = t.strs("net_connect")
	for i, s := range caps.NetConnect {
		c.checkHostPort(t, "net_connect", s, at[i])
	}
	// kv is accepted and not enforced: every capsule has KV in its own
	// per-principal namespace and nothing else's, so a grant changes nothing.
	caps.Kv, _ = t.strs("kv")
	caps.FSRead, at = t.strs("fs_read")
	for i, s := range caps.FSRead {
		c.checkPathGrant(t, "fs_read", s, at[i])
	}
	caps.FSWrite, at = t.strs("fs_write")
	for i, s := range caps.FSWrite {
		c.checkPathGrant(t, "fs_write", s, at[i])
	}
	caps.HostProcess, at = t.strs("host_process")
	for i, s := range caps.HostProcess {
		if strings.TrimSpace(s) == "" {
			c.errorf(at[i].at, t.keyPath("host_process"), "empty command in %s", t.keyPath("host_process"))
		}
	}
	var v *value
	if caps.AllowPersistent, v = t.boolean("allow_persistent"); caps.AllowPersistent && !t.has("host_process") {
		c.warnf(v.at, t.keyPath("allow_persistent"), "allow_persistent has no effect without host_process: it only extends a host_process grant to persistent children")
	}
	caps.Identity, at = t.strs("identity")
	for i, s := range caps.Identity {
		switch s {
		case "resolve", "link", "admin":
		default:
			c.warnf(at[i].at, t.keyPath("identity"), "identity grant %q grants nothing: use \"resolve\", \"link\" or \"admin\"", s)
		}
	}
	caps.AllowPromptInjection, _ = t.boolean("allow_prompt_injection")
	caps.ToolMiddleware, _ = t.boolean("tool_middleware")
	t.rest(func(key string, v *value) string {
		switch key {
		case "ipc_publish":
			return "legacy capabilities.ipc_publish has no effect here: the keys of [publish] are the publish ACL; move these patterns there, e.g. \"" + firstString(v, "topic.v1.name") + "\" = { wit = \"…\" }"
		case "ipc_subscribe":
			return "legacy capabilities.ipc_subscribe has no effect here: the keys of [subscribe] are the subscribe ACL; move these patterns there, e.g. \"" + firstString(v, "topic.v1.name") + "\" = { wit = \"…\" }"
		case "bind_workers":
			return "capabilities.bind_workers has no effect here: this runtime does not run concurrent run-loop workers; remove it"
		}
		return ""
	})
	return caps
}

func firstString(v *value, fallback string) string {
	if v.kind == kindArray && len(v.items) > 0 && v.items[0].kind == kindString {
		return v.items[0].scalar
	}
	return fallback
}

// checkPathGrant checks an fs_read/fs_write entry: `*` (the workspace),
// cwd://, home:// or an absolute path. Traversal is an error; anything else
// matches nothing and says so.
func (c *checker) checkPathGrant(t *table, key, s string, v *value) {
	kp := t.keyPath(key)
	rest := s
	scheme, after, hasScheme := strings.Cut(s, "://")
	if hasScheme {
		rest = after
	}
	for _, part := range strings.FieldsFunc(rest, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			c.errorf(v.at, kp, "%s grant %q contains a `..` component: grants may not climb out of their root; name the directory itself", key, s)
			return
		}
	}
	switch {
	case s == "*":
	case hasScheme && scheme == "home":
	case hasScheme && scheme == "cwd":
		c.notef(v.at, kp, "%s grant %q: cwd:// is the capsule's own install directory (%s), not the workspace; use \"*\" for the workspace", key, s, "cwd://"+strings.TrimLeft(rest, "/"))
	case hasScheme:
		c.warnf(v.at, kp, "%s grant %q: %s:// is not a recognised path scheme, so this grant matches nothing; use \"*\" (the workspace), \"cwd://\" (the capsule's directory), \"home://\" or an absolute path", key, s, scheme)
	case strings.HasPrefix(s, "/"):
	default:
		c.warnf(v.at, kp, "%s grant %q is neither \"*\", a cwd:// or home:// grant, nor an absolute path, so it matches nothing", key, s)
	}
}

// checkNet checks an HTTP host grant: a host name, "*.domain" or "*".
func (c *checker) checkNet(t *table, key, s string, v *value) {
	switch {
	case s == "":
		c.warnf(v.at, t.keyPath(key), "empty %s grant matches nothing", key)
	case strings.ContainsAny(s, "/ ") || strings.Contains(s, "://"):
		c.warnf(v.at, t.keyPath(key), "%s grant %q is not a host name, so it matches nothing; write the host alone, e.g. \"api.example.com\"", key, s)
	}
}

// checkHostPort checks "host:port" or "host:*" (net_connect, TCP net_bind).
func (c *checker) checkHostPort(t *table, key, s string, v *value) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		also := ""
		if key == "net_bind" {
			also = " (or \"unix:*\" for the Unix listener)"
		}
		c.warnf(v.at, t.keyPath(key), "%s grant %q matches nothing: write \"host:port\" or \"host:*\"%s", key, s, also)
		return
	}
	host, port := s[:i], s[i+1:]
	if strings.HasPrefix(host, "*") {
		c.warnf(v.at, t.keyPath(key), "%s grant %q matches nothing: wildcard hosts are not supported; name the host", key, s)
		return
	}
	if port == "*" {
		return
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		c.warnf(v.at, t.keyPath(key), "%s grant %q matches nothing: %s", key, s, fmt.Sprintf("port %q is not 1-65535 or *", port))
	}
}
