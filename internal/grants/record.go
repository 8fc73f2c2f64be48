package grants

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/astrid-go/astrid/manifest"
)

// FormatVersion is the layout of a stored Record.
const FormatVersion = 1

// Record is what the operator approved for one capsule: every grant its
// manifest asked for, each a line in the manifest's own syntax
// (`fs_read = ["/"]`, `[publish] "a.b"`), so that a refusal names exactly
// what was not approved.
type Record struct {
	Format  int    `json:"format"`
	Capsule string `json:"capsule"`
	// Version is the package version approved; for people reading the
	// record, never compared.
	Version string `json:"version,omitempty"`
	// Grants are the power the capsule holds: a manifest may ask for any
	// subset of them.
	Grants []string `json:"grants"`
	// MutableTools are the tools the manifest declared mutable = true: each
	// one is asked about before it runs (the approval capsule), so a later
	// manifest must keep declaring it, or the tool would run unasked.
	MutableTools []string `json:"mutable_tools,omitempty"`
	// HighRisk are the high-risk grants among Grants, each with what it
	// allows (manifest.Risks): what the operator accepted by typing the
	// capsule's name or passing --accept-risk. For people reading the
	// record, never compared.
	HighRisk []string `json:"high_risk,omitempty"`
}

// Of is the record of what m asks for.
func Of(m *manifest.Manifest) Record {
	r := Record{Format: FormatVersion, Capsule: m.ID(), Version: m.Package.Version, Grants: []string{}}
	for _, risk := range m.Capabilities.HighRisks() {
		r.HighRisk = append(r.HighRisk, risk.Grant+": "+risk.Reason)
	}
	add := func(g string) {
		if !slices.Contains(r.Grants, g) {
			r.Grants = append(r.Grants, g)
		}
	}
	c := m.Capabilities
	flag := func(name string, on bool) {
		if on {
			add(name + " = true")
		}
	}
	list := func(name string, values []string) {
		for _, v := range values {
			add(name + " = [" + strconv.Quote(v) + "]")
		}
	}
	// The high-risk grant first, then [capabilities] order, as capsule
	// check shows them. kv is accepted and not enforced (DESIGN §4a): it
	// grants nothing, so it is not a grant here either.
	flag("tool_middleware", c.ToolMiddleware)
	flag("uplink", c.Uplink)
	list("net", c.Net)
	list("net_bind", c.NetBind)
	list("net_connect", c.NetConnect)
	list("fs_read", c.FSRead)
	list("fs_write", c.FSWrite)
	list("host_process", c.HostProcess)
	flag("allow_persistent", c.AllowPersistent)
	list("identity", c.Identity)
	flag("allow_prompt_injection", c.AllowPromptInjection)
	for _, p := range m.PublishPatterns() {
		add("[publish] " + strconv.Quote(p))
	}
	for _, p := range m.SubscribePatterns() {
		add("[subscribe] " + strconv.Quote(p))
	}
	for _, i := range m.Interceptors() {
		// The pattern puts the capsule into chains; its handler's name
		// and priority are the capsule's own business.
		add("interceptor " + strconv.Quote(i.Pattern))
	}
	for _, s := range m.MCPServers {
		if s.Remote() {
			// The endpoint is what the operator approves: the headers
			// name [env] values the operator sets anyway.
			add("[[mcp_server]] " + strconv.Quote(s.ID) + " connects to " + strconv.Quote(s.URL))
			continue
		}
		if s.Type != "stdio" {
			continue
		}
		argv := make([]string, 0, 1+len(s.Args))
		for _, a := range append([]string{s.Command}, s.Args...) {
			argv = append(argv, strconv.Quote(a))
		}
		add("[[mcp_server]] " + strconv.Quote(s.ID) + " runs [" + strings.Join(argv, ", ") + "]")
	}
	for _, t := range m.Tools {
		if t.Mutable && !slices.Contains(r.MutableTools, t.Name) {
			r.MutableTools = append(r.MutableTools, t.Name)
		}
	}
	return r
}

// Beyond lists what asked holds that approved does not: each grant not in
// the approved record, and each approved mutable tool no longer declared
// mutable. Grants are compared as written, so a rewritten entry counts as
// new even where it would match less (the operator approves it by
// installing again); nil means asked is within approved.
func Beyond(approved, asked Record) []string {
	var out []string
	for _, g := range asked.Grants {
		if !slices.Contains(approved.Grants, g) {
			out = append(out, g)
		}
	}
	for _, t := range approved.MutableTools {
		if !slices.Contains(asked.MutableTools, t) {
			out = append(out, fmt.Sprintf("[[tool]] %q without mutable = true (it would run without being asked about)", t))
		}
	}
	return out
}
