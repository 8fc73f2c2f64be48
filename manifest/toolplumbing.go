package manifest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/astrid-go/astrid/ipc"
)

// ToolMiddlewareGrant names the privileged grant of DESIGN §4c as a manifest
// writes it.
const ToolMiddlewareGrant = "[capabilities] tool_middleware = true"

// The tool plumbing (DESIGN §4c), as equal-depth patterns: what a capsule
// without tool_middleware may not reach by any pattern.
const (
	plumbingRequest      = ipc.ToolRequestExecuteTopic // the orchestrators' requests
	plumbingExecute      = "tool.v1.execute.*"         // a call forwarded to a provider (and the consolidated result)
	plumbingResult       = ipc.ToolResultPattern       // a provider's result on its way back
	plumbingConsolidated = ipc.ToolExecuteResultTopic  // the router's answer to the orchestrator
	plumbingHook         = ipc.AgentAfterToolTopic     // a call's result put to the hooks before the model reads it
)

// PlumbingAccess is how a manifest pattern reaches the tool plumbing.
type PlumbingAccess uint8

// The three ways a pattern reaches the plumbing.
const (
	// PlumbingPublish is a [publish] key.
	PlumbingPublish PlumbingAccess = iota
	// PlumbingIntercept is a [subscribe] key with a handler.
	PlumbingIntercept
	// PlumbingRead is a [subscribe] key read as the subscribe ACL: what
	// the capsule may receive, as a receiver or by a subscription it opens
	// at run time (the dispatcher checks those against these keys).
	PlumbingRead
)

// PlumbingViolation is one [publish] or [subscribe] pattern that reaches the
// tool plumbing without the grant.
type PlumbingViolation struct {
	Access  PlumbingAccess
	Pattern string
	// Reaches are the plumbing topics the pattern can match, each with what
	// it is for, e.g. "tool.v1.execute.<name> (a call on its way to a tool)".
	Reaches []string
}

func (v PlumbingViolation) Error() string {
	section, verb := "[publish]", "publish on"
	allowed := "intercept and answer only its own tools, by their exact topics tool.v1.execute.<name> and tool.v1.execute.<name>.result"
	switch v.Access {
	case PlumbingIntercept:
		section, verb = "[subscribe] interceptor", "intercept"
	case PlumbingRead:
		section, verb = "[subscribe]", "let the capsule read"
		allowed = "read, of the tool topics, only its own tools' exact ones, the consolidated " + plumbingConsolidated + ", tool.v1.request.describe, tool.v1.response.describe.* and tool.v1.request.cancel"
	}
	return fmt.Sprintf("%s %q would %s %s, tool plumbing that needs %s (a high-risk grant: it decides what every tool call does); without it a capsule may %s",
		section, v.Pattern, verb, strings.Join(v.Reaches, " and "), ToolMiddlewareGrant, allowed)
}

// ToolPlumbingViolations checks an effective ACL (the manifest's, plus what
// engines add) for a capsule without tool_middleware: publish are its
// [publish] patterns, subscribe its [subscribe] patterns (every key, handler
// or not: each is also what the capsule may subscribe to at run time),
// interceptors the subscribe patterns that name a handler, and tools the
// tools it declares ([[tool]] names). A capsule's own tools are those names
// and the tools it intercepts by an exact tool.v1.execute.<name>, which is
// what makes a capsule a tool's provider; which capsule may provide a name
// is the loader's duplicate-tool rule, not this one.
//
// Publishing on tool.v1.request.execute is how any capsule calls a tool,
// and stays open to what [publish] grants.
func ToolPlumbingViolations(publish, subscribe, interceptors, tools []string) []PlumbingViolation {
	own := slices.Clone(tools)
	for _, p := range interceptors {
		if name, ok := ipc.ToolNameFromExecuteTopic(p); ok {
			own = append(own, name)
		}
	}
	var out []PlumbingViolation
	for _, p := range interceptors {
		var reaches []string
		if overlaps(p, ipc.InterceptorMatcher, plumbingRequest) {
			reaches = append(reaches, plumbingRequest+" (every tool call's arguments, before approval and routing)")
		}
		// The consolidated result, intercepted exactly, is how an
		// orchestrator (upstream's react) takes its answers: the
		// consumer's topic, not plumbing. A wildcard reaching it is still
		// refused, as it reaches other capsules' tools too.
		consumer := p == plumbingConsolidated
		if name, ok := ipc.ToolNameFromExecuteTopic(p); !consumer && !(ok && slices.Contains(own, name)) && overlaps(p, ipc.InterceptorMatcher, plumbingExecute) {
			reaches = append(reaches, "tool.v1.execute.<name> of tools it does not provide (calls on their way to another capsule's tool)")
		}
		if overlaps(p, ipc.InterceptorMatcher, plumbingResult) {
			reaches = append(reaches, "tool.v1.execute.<name>.result (results on their way back)")
		}
		if overlaps(p, ipc.InterceptorMatcher, plumbingHook) {
			reaches = append(reaches, plumbingHook+" (each call's result, put to the hooks before the model reads it)")
		}
		if len(reaches) > 0 {
			out = append(out, PlumbingViolation{Access: PlumbingIntercept, Pattern: p, Reaches: reaches})
		}
	}
	for _, p := range subscribe {
		if slices.ContainsFunc(out, func(v PlumbingViolation) bool { return v.Pattern == p }) {
			continue // refused as an interceptor already: one error per key
		}
		if r := readReaches(p, own); len(r) > 0 {
			out = append(out, PlumbingViolation{Access: PlumbingRead, Pattern: p, Reaches: r})
		}
	}
	for _, p := range publish {
		var reaches []string
		if overlaps(p, ipc.RouteMatcher, plumbingConsolidated) {
			reaches = append(reaches, plumbingConsolidated+" (the consolidated answer every caller takes)")
		}
		if p != plumbingConsolidated && overlaps(p, ipc.RouteMatcher, plumbingExecute) {
			reaches = append(reaches, "tool.v1.execute.<name> (a request forwarded to a provider, which bypasses approval)")
		}
		if name, ok := ipc.ToolNameFromResultTopic(p); !(ok && slices.Contains(own, name)) && overlaps(p, ipc.RouteMatcher, plumbingResult) {
			reaches = append(reaches, "tool.v1.execute.<name>.result of tools it does not provide")
		}
		if len(reaches) > 0 {
			out = append(out, PlumbingViolation{Access: PlumbingPublish, Pattern: p, Reaches: reaches})
		}
	}
	return out
}

// readReaches is what subscribe pattern p, read as a route (a trailing `.*`
// takes one or more segments, as the dispatcher reads the subscribe ACL),
// would let a capsule owning the tools own read of the tool plumbing: the
// calls' arguments (file contents being written included) and other tools'
// results. A subscription the capsule opens at run time must be covered by
// one of its keys, that is match no topic its key does not, so refusing the
// key refuses every such subscription too.
func readReaches(p string, own []string) []string {
	var reaches []string
	if overlaps(p, ipc.RouteMatcher, plumbingRequest) {
		reaches = append(reaches, plumbingRequest+" (every tool call's arguments, before approval and routing)")
	}
	if overlaps(p, ipc.RouteMatcher, plumbingHook) {
		reaches = append(reaches, plumbingHook+" (each call's result, put to the hooks before the model reads it)")
	}
	// The consolidated answer, by its exact topic, stays open: it is how an
	// orchestrator (react, the CLI frontend) takes the results of the calls
	// it made, and the kernel delivers a reply only to the capsules whose
	// request it answers (dispatch.deliverReply), so subscribing to it
	// reads no other capsule's results. Frontends accept it only from a
	// tool_middleware holder. A wildcard reaching it reaches the calls to
	// other tools too.
	if name, ok := ipc.ToolNameFromExecuteTopic(p); p != plumbingConsolidated && !(ok && slices.Contains(own, name)) && overlaps(p, ipc.RouteMatcher, plumbingExecute) {
		reaches = append(reaches, "tool.v1.execute.<name> of tools it does not provide (calls on their way to another capsule's tool, arguments included)")
	}
	if name, ok := ipc.ToolNameFromResultTopic(p); !(ok && slices.Contains(own, name)) && overlaps(p, ipc.RouteMatcher, plumbingResult) {
		reaches = append(reaches, "tool.v1.execute.<name>.result of tools it does not provide (other tools' results)")
	}
	return reaches
}

func overlaps(p string, m ipc.Matcher, family string) bool {
	return ipc.ValidatePattern(p) == nil && ipc.PatternsOverlap(p, m, family, ipc.InterceptorMatcher)
}

// checkToolPlumbing refuses, at their keys, the [publish] and [subscribe]
// patterns that reach the tool plumbing without the grant.
func (c *checker) checkToolPlumbing(top *table, m *Manifest) {
	if m.Capabilities.ToolMiddleware {
		return
	}
	tools := make([]string, 0, len(m.Tools))
	for _, t := range m.Tools {
		tools = append(tools, t.Name)
	}
	var intercepts []string
	for _, i := range m.Interceptors() {
		intercepts = append(intercepts, i.Pattern)
	}
	for _, v := range ToolPlumbingViolations(m.PublishPatterns(), m.SubscribePatterns(), intercepts, tools) {
		section := "subscribe"
		if v.Access == PlumbingPublish {
			section = "publish"
		}
		at, path := pos{1, 1}, section
		if t := top.sub(section); t != nil {
			path = t.keyPath(v.Pattern)
			if kv := t.get(v.Pattern); kv != nil {
				at = kv.keyAt
			}
		}
		c.errorf(at, path, "%s", v.Error())
	}
}
