package manifest

import (
	"slices"
	"strconv"
	"strings"
)

// Capabilities is a capsule's [capabilities] table after component
// capabilities were merged into it. Everything defaults to deny; Kv is
// accepted and not enforced (every capsule has KV in its own namespace).
type Capabilities struct {
	Uplink               bool     `toml:"uplink" json:"uplink,omitempty"`
	Net                  []string `toml:"net" json:"net,omitempty"`
	NetBind              []string `toml:"net_bind" json:"net_bind,omitempty"`
	NetConnect           []string `toml:"net_connect" json:"net_connect,omitempty"`
	Kv                   []string `toml:"kv" json:"kv,omitempty"`
	FSRead               []string `toml:"fs_read" json:"fs_read,omitempty"`
	FSWrite              []string `toml:"fs_write" json:"fs_write,omitempty"`
	HostProcess          []string `toml:"host_process" json:"host_process,omitempty"`
	AllowPersistent      bool     `toml:"allow_persistent" json:"allow_persistent,omitempty"`
	Identity             []string `toml:"identity" json:"identity,omitempty"`
	AllowPromptInjection bool     `toml:"allow_prompt_injection" json:"allow_prompt_injection,omitempty"`
	// ToolMiddleware is DESIGN §4c's privileged grant: the capsule may
	// intercept, read and publish the tool plumbing (see ToolPlumbingViolations),
	// and frontends take a consolidated tool result only from a holder.
	ToolMiddleware bool `toml:"tool_middleware" json:"tool_middleware,omitempty"`
}

// Merge unites o into c: lists joined without duplicates (c's order first),
// flags OR-ed. Components' capabilities reach the capsule this way.
func (c *Capabilities) Merge(o Capabilities) {
	c.Uplink = c.Uplink || o.Uplink
	c.AllowPersistent = c.AllowPersistent || o.AllowPersistent
	c.AllowPromptInjection = c.AllowPromptInjection || o.AllowPromptInjection
	c.ToolMiddleware = c.ToolMiddleware || o.ToolMiddleware
	for _, p := range []struct{ dst, src *[]string }{
		{&c.Net, &o.Net}, {&c.NetBind, &o.NetBind}, {&c.NetConnect, &o.NetConnect},
		{&c.Kv, &o.Kv}, {&c.FSRead, &o.FSRead}, {&c.FSWrite, &o.FSWrite},
		{&c.HostProcess, &o.HostProcess}, {&c.Identity, &o.Identity},
	} {
		*p.dst = unite(*p.dst, *p.src)
	}
}

func unite(a, b []string) []string {
	out := a[:0:0]
	for _, s := range slices.Concat(a, b) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Granted lists the capabilities held, as "name = value" lines for reports:
// the high-risk tool_middleware first, then the [capabilities] key order.
func (c Capabilities) Granted() []string {
	var out []string
	if c.ToolMiddleware {
		out = append(out, "tool_middleware = true")
	}
	flag := func(name string, on bool) {
		if on {
			out = append(out, name+" = true")
		}
	}
	list := func(name string, l []string) {
		if len(l) > 0 {
			q := make([]string, len(l))
			for i, s := range l {
				q[i] = strconv.Quote(s)
			}
			out = append(out, name+" = ["+strings.Join(q, ", ")+"]")
		}
	}
	flag("uplink", c.Uplink)
	list("net", c.Net)
	list("net_bind", c.NetBind)
	list("net_connect", c.NetConnect)
	list("kv", c.Kv)
	list("fs_read", c.FSRead)
	list("fs_write", c.FSWrite)
	list("host_process", c.HostProcess)
	flag("allow_persistent", c.AllowPersistent)
	list("identity", c.Identity)
	flag("allow_prompt_injection", c.AllowPromptInjection)
	return out
}
