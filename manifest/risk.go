package manifest

import (
	"slices"
	"strconv"
	"strings"
)

// RiskLevel ranks what a grant allows.
type RiskLevel string

// The three levels, highest first. A high one makes install and approve
// ask the operator to type the capsule's name (or pass --yes
// --accept-risk): a bare --yes is not enough.
const (
	RiskHigh   RiskLevel = "high"
	RiskMedium RiskLevel = "medium"
	RiskLow    RiskLevel = "low"
)

// Risk is one grant as `capsule check` and install rank it, with the
// one-line reason a person reads before approving.
type Risk struct {
	Level  RiskLevel `json:"level"`
	Grant  string    `json:"grant"`
	Reason string    `json:"reason"`
}

// Risks ranks every grant c holds, highest first, each with its reason.
func (c Capabilities) Risks() []Risk {
	var out []Risk
	add := func(level RiskLevel, grant, reason string) {
		out = append(out, Risk{Level: level, Grant: grant, Reason: reason})
	}
	quoted := func(name string, l []string) string {
		q := make([]string, len(l))
		for i, s := range l {
			q[i] = strconv.Quote(s)
		}
		return name + " = [" + strings.Join(q, ", ") + "]"
	}
	if c.ToolMiddleware {
		add(RiskHigh, "tool_middleware = true", "may see, rewrite and answer every tool call (arguments, file contents and results included)")
	}
	if c.Uplink {
		add(RiskHigh, "uplink = true", "may act for the people it serves: publish as them and answer approval questions")
	}
	if c.AllowPromptInjection {
		add(RiskHigh, "allow_prompt_injection = true", "may put its own text into the model's system prompt")
	}
	if len(c.HostProcess) > 0 {
		reason := "may run these host programs (confined to its grants)"
		if slices.Contains(c.HostProcess, "*") {
			reason = "may run any host program (confined to its grants)"
		}
		add(RiskHigh, quoted("host_process", c.HostProcess), reason)
	}
	if outside := literalPaths(c.FSWrite); len(outside) > 0 {
		reason := "may write and delete files outside the workspace"
		if slices.Contains(outside, "/") {
			reason = "may write and delete any file the user can"
		}
		add(RiskHigh, quoted("fs_write", outside), reason)
	}
	if slices.ContainsFunc(c.Net, isWildcardHost) {
		add(RiskHigh, quoted("net", c.Net), "may send data to any host on the internet")
	}
	if outside := literalPaths(c.FSRead); len(outside) > 0 {
		add(RiskMedium, quoted("fs_read", outside), "may read files outside the workspace")
	}
	if len(c.NetBind) > 0 {
		add(RiskMedium, quoted("net_bind", c.NetBind), "may listen for connections on this machine")
	}
	if len(c.NetConnect) > 0 {
		add(RiskMedium, quoted("net_connect", c.NetConnect), "may connect to these local sockets")
	}
	if c.AllowPersistent {
		add(RiskMedium, "allow_persistent = true", "may keep processes running after its calls end")
	}
	if len(c.Identity) > 0 {
		add(RiskMedium, quoted("identity", c.Identity), "may read who the people it serves are")
	}
	if len(c.Net) > 0 && !slices.ContainsFunc(c.Net, isWildcardHost) {
		add(RiskLow, quoted("net", c.Net), "may reach these hosts only")
	}
	if inside := scopedPaths(c.FSWrite); len(inside) > 0 {
		add(RiskLow, quoted("fs_write", inside), "may write in the workspace, its install directory or its own home")
	}
	if inside := scopedPaths(c.FSRead); len(inside) > 0 {
		add(RiskLow, quoted("fs_read", inside), "may read the workspace, its install directory or its own home")
	}
	if len(c.Kv) > 0 {
		add(RiskLow, quoted("kv", c.Kv), "keeps state in its own store")
	}
	return out
}

// HighRisks are the grants of Risks at RiskHigh.
func (c Capabilities) HighRisks() []Risk {
	var out []Risk
	for _, r := range c.Risks() {
		if r.Level == RiskHigh {
			out = append(out, r)
		}
	}
	return out
}

// literalPaths are the fs entries that name absolute paths: outside the
// workspace, the install directory and the capsule's home.
func literalPaths(l []string) []string {
	var out []string
	for _, p := range l {
		if strings.HasPrefix(p, "/") {
			out = append(out, p)
		}
	}
	return out
}

// scopedPaths are the fs entries that are not absolute paths: "*" (the
// workspace), cwd:// and home://.
func scopedPaths(l []string) []string {
	var out []string
	for _, p := range l {
		if !strings.HasPrefix(p, "/") {
			out = append(out, p)
		}
	}
	return out
}

// isWildcardHost reports whether a net entry admits any host: "*", or a
// pattern whose host part is only a wildcard ("*:443").
func isWildcardHost(h string) bool {
	host := h
	if i := strings.LastIndex(h, ":"); i >= 0 && !strings.Contains(h, "]") {
		host = h[:i]
	}
	return host == "*" || host == "*.*" || host == ""
}
