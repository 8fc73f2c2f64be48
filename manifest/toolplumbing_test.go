package manifest

import (
	"strings"
	"testing"
)

// Every way the attacker reached the tool plumbing, and the
// wildcards that reach the same topics: each fails to parse without
// tool_middleware, naming the topic it reaches and the grant, and parses
// cleanly with it.
func TestToolPlumbingNeedsGrant(t *testing.T) {
	const ic = `{ wit = "opaque", handler = "h", priority = 1 }`
	tests := []struct {
		name  string
		body  string
		topic string // the plumbing topic the error must name
	}{
		// Sniff and rewrite every call's arguments at a low priority number.
		{"sniff requests", "[subscribe]\n\"tool.v1.request.execute\" = " + ic + "\n", "tool.v1.request.execute"},
		{"sniff requests by wildcard segment", "[subscribe]\n\"tool.*.request.execute\" = " + ic + "\n", "tool.v1.request.execute"},
		{"sniff requests by last-segment wildcard", "[subscribe]\n\"tool.v1.request.*\" = " + ic + "\n", "tool.v1.request.execute"},
		{"sniff requests by all wildcards", "[subscribe]\n\"*.*.*.*\" = " + ic + "\n", "tool.v1.request.execute"},
		// Answer every call with a forged consolidated result.
		{"forge consolidated result", "[publish]\n\"tool.v1.execute.result\" = \"opaque\"\n", "tool.v1.execute.result"},
		{"forge consolidated result by tool.v1.*", "[publish]\n\"tool.v1.*\" = \"opaque\"\n", "tool.v1.execute.result"},
		{"forge consolidated result by tool.*", "[publish]\n\"tool.*\" = \"opaque\"\n", "tool.v1.execute.result"},
		{"forge consolidated result by tool.*.execute.result", "[publish]\n\"tool.*.execute.result\" = \"opaque\"\n", "tool.v1.execute.result"},
		// Forward a request straight to a provider, past approval.
		{"forward a request", "[publish]\n\"tool.v1.execute.write_file\" = \"opaque\"\n", "tool.v1.execute.<name>"},
		// Intercept every tool and answer itself.
		{"intercept every tool", "[subscribe]\n\"tool.v1.execute.*\" = " + ic + "\n", "tool.v1.execute.<name>"},
		{"intercept every tool by tool.*.execute.*", "[subscribe]\n\"tool.*.execute.*\" = " + ic + "\n", "tool.v1.execute.<name>"},
		{"intercept every tool by tool.v1.*.*", "[subscribe]\n\"tool.v1.*.*\" = " + ic + "\n", "tool.v1.execute.<name>"},
		// Read or answer in the hooks' place each call's result the agent
		// puts to the after-tool hook.
		{"intercept the after-tool hook", "[subscribe]\n\"tool.v1.hook.after_tool\" = " + ic + "\n", "tool.v1.hook.after_tool"},
		{"intercept the after-tool hook by tool.v1.hook.*", "[subscribe]\n\"tool.v1.hook.*\" = " + ic + "\n", "tool.v1.hook.after_tool"},
		{"read the after-tool hook", "[subscribe]\n\"tool.v1.hook.after_tool\" = \"opaque\"\n", "tool.v1.hook.after_tool"},
		{"read the after-tool hook by tool.v1.*", "[subscribe]\n\"tool.v1.*\" = \"opaque\"\n", "tool.v1.hook.after_tool"},
		// Rewrite every result on its way back.
		{"rewrite results", "[subscribe]\n\"tool.v1.execute.*.result\" = " + ic + "\n", "tool.v1.execute.<name>.result"},
		{"rewrite results by tool.v1.execute.*.*", "[subscribe]\n\"tool.v1.execute.*.*\" = " + ic + "\n", "tool.v1.execute.<name>.result"},
		{"rewrite one tool's result", "[subscribe]\n\"tool.v1.execute.write_file.result\" = " + ic + "\n", "tool.v1.execute.<name>.result"},
		{"rewrite own tool's result", "[subscribe]\n\"tool.v1.execute.t.result\" = " + ic + "\n[[tool]]\nname = \"t\"\ndescription_for_llm = \"x\"\n", "tool.v1.execute.<name>.result"},
		// Publish other tools' results.
		{"forge a result for every tool", "[publish]\n\"tool.v1.execute.*.result\" = \"opaque\"\n", "tool.v1.execute.<name>.result"},
		{"forge results by tool.v1.execute.*", "[publish]\n\"tool.v1.execute.*\" = \"opaque\"\n", "tool.v1.execute.<name>.result"},
		{"forge another tool's result", "[publish]\n\"tool.v1.execute.write_file.result\" = \"opaque\"\n", "tool.v1.execute.<name>.result"},
		{"forge results by a subtree wildcard", "[publish]\n\"tool.v1.execute.write_file.*\" = \"opaque\"\n", "tool.v1.execute.<name>.result"},
		// Read every call's arguments (file contents being written
		// included) without a handler: a receiver key, and so every
		// subscription the capsule may open at run time.
		{"read requests", "[subscribe]\n\"tool.v1.request.execute\" = \"opaque\"\n", "tool.v1.request.execute"},
		{"read requests, long form", "[subscribe]\n\"tool.v1.request.execute\" = { wit = \"opaque\" }\n", "tool.v1.request.execute"},
		{"read requests by tool.v1.request.*", "[subscribe]\n\"tool.v1.request.*\" = \"opaque\"\n", "tool.v1.request.execute"},
		{"read requests by tool.v1.*", "[subscribe]\n\"tool.v1.*\" = \"opaque\"\n", "tool.v1.request.execute"},
		{"read requests by tool.*", "[subscribe]\n\"tool.*\" = \"opaque\"\n", "tool.v1.request.execute"},
		{"read requests by *.*", "[subscribe]\n\"*.*\" = \"opaque\"\n", "tool.v1.request.execute"},
		{"read requests by tool.*.request.execute", "[subscribe]\n\"tool.*.request.execute\" = \"opaque\"\n", "tool.v1.request.execute"},
		{"read requests by tool.v1.*.execute", "[subscribe]\n\"tool.v1.*.execute\" = \"opaque\"\n", "tool.v1.request.execute"},
		{"read requests by tool.*.*.*", "[subscribe]\n\"tool.*.*.*\" = \"opaque\"\n", "tool.v1.request.execute"},
		// An interceptor's key is also its subscribe ACL, read as a route:
		// equal-depth "tool.v1.*" intercepts nothing of the plumbing, but
		// lets the capsule subscribe to all of it at run time.
		{"equal-depth interceptor above the plumbing", "[subscribe]\n\"tool.v1.*\" = { wit = \"opaque\", handler = \"h\" }\n", "tool.v1.request.execute"},
		// Read the calls forwarded to another capsule's tool.
		{"read another tool's calls", "[subscribe]\n\"tool.v1.execute.write_file\" = \"opaque\"\n", "tool.v1.execute.<name>"},
		{"read every tool's calls by tool.v1.execute.*", "[subscribe]\n\"tool.v1.execute.*\" = \"opaque\"\n", "tool.v1.execute.<name>"},
		{"read every tool's calls by tool.*.execute.*", "[subscribe]\n\"tool.*.execute.*\" = \"opaque\"\n", "tool.v1.execute.<name>"},
		{"read every tool's calls by *.v1.execute.write_file", "[subscribe]\n\"*.v1.execute.write_file\" = \"opaque\"\n", "tool.v1.execute.<name>"},
		{"read another tool's calls beside an own tool", "[subscribe]\n\"tool.v1.execute.*\" = \"opaque\"\n[[tool]]\nname = \"t\"\ndescription_for_llm = \"x\"\n", "tool.v1.execute.<name>"},
		// Read other tools' results.
		{"read another tool's results", "[subscribe]\n\"tool.v1.execute.write_file.result\" = \"opaque\"\n", "tool.v1.execute.<name>.result"},
		{"read results by tool.v1.execute.write_file.*", "[subscribe]\n\"tool.v1.execute.write_file.*\" = \"opaque\"\n", "tool.v1.execute.<name>.result"},
		{"read results by tool.v1.execute.*.result", "[subscribe]\n\"tool.v1.execute.*.result\" = \"opaque\"\n", "tool.v1.execute.<name>.result"},
		{"read results by tool.v1.execute.result.*", "[subscribe]\n\"tool.v1.execute.result.*\" = \"opaque\"\n", "tool.v1.execute.<name>.result"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, diags := Parse([]byte(head+tc.body), "Capsule.toml", "")
			if !diags.HasErrors() {
				t.Fatalf("parsed without an error:\n%s", render(diags))
			}
			var found bool
			for _, d := range diags {
				if d.Severity == Error && strings.Contains(d.Message, tc.topic) && strings.Contains(d.Message, ToolMiddlewareGrant) {
					found = true
				}
			}
			if !found {
				t.Errorf("no error names %q and %q:\n%s", tc.topic, ToolMiddlewareGrant, render(diags))
			}
			granted := head + "[capabilities]\ntool_middleware = true\n" + tc.body
			_, diags = Parse([]byte(granted), "Capsule.toml", "")
			for _, d := range diags {
				// The widest wildcards also reach the elicit answers,
				// which no grant opens (TestElicitAnswersAreTheHostsAlone).
				if d.Severity == Error && !strings.Contains(d.Message, "elicit questions") {
					t.Errorf("with the grant:\n%s", render(diags))
				}
			}
		})
	}
}

// What a capsule without the grant keeps: calling tools, answering and
// reading its own by their exact topics, taking consolidated results, and
// the describe and cancel topics.
func TestToolPlumbingOpenWithoutGrant(t *testing.T) {
	tests := []struct{ name, body string }{
		{"call a tool", "[publish]\n\"tool.v1.request.execute\" = \"opaque\"\n"},
		{"call and cancel by wildcard", "[publish]\n\"tool.v1.request.*\" = \"opaque\"\n"},
		{"own tool by interceptor", "[subscribe]\n\"tool.v1.execute.greet\" = { wit = \"opaque\", handler = \"h\" }\n[publish]\n\"tool.v1.execute.greet.result\" = \"opaque\"\n"},
		{"own tool by [[tool]]", "[publish]\n\"tool.v1.execute.greet.result\" = \"opaque\"\n[[tool]]\nname = \"greet\"\ndescription_for_llm = \"x\"\n"},
		{"take consolidated results by interceptor", "[subscribe]\n\"tool.v1.execute.result\" = { wit = \"opaque\", handler = \"h\" }\n"},
		{"subscribe to consolidated results", "[subscribe]\n\"tool.v1.execute.result\" = \"opaque\"\n"},
		{"describe", "[subscribe]\n\"tool.v1.request.describe\" = { wit = \"opaque\", handler = \"h\" }\n[publish]\n\"tool.v1.response.describe.t\" = \"opaque\"\n"},
		{"collect describe answers and cancel", "[subscribe]\n\"tool.v1.request.describe\" = \"opaque\"\n\"tool.v1.response.describe.*\" = \"opaque\"\n\"tool.v1.request.cancel\" = \"opaque\"\n"},
		{"read own tool's calls and results", "[subscribe]\n\"tool.v1.execute.greet\" = \"opaque\"\n\"tool.v1.execute.greet.result\" = \"opaque\"\n[[tool]]\nname = \"greet\"\ndescription_for_llm = \"x\"\n"},
		{"read own tool's results beside its interceptor", "[subscribe]\n\"tool.v1.execute.greet\" = { wit = \"opaque\", handler = \"h\" }\n\"tool.v1.execute.greet.result\" = \"opaque\"\n"},
		{"wildcards outside the plumbing", "[subscribe]\n\"tool.v1.response.*.*\" = \"opaque\"\n\"tool.v2.request.execute\" = \"opaque\"\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, diags := Parse([]byte(head+tc.body), "Capsule.toml", ""); diags.HasErrors() {
				t.Errorf("refused:\n%s", render(diags))
			}
		})
	}
}

// A component's tool_middleware reaches the capsule, as every other
// component capability does.
func TestToolMiddlewareFromComponent(t *testing.T) {
	src := head + "[[component]]\nfile = \"a.wasm\"\n[component.capabilities]\ntool_middleware = true\n[subscribe]\n\"tool.v1.request.execute\" = { wit = \"opaque\", handler = \"h\" }\n"
	m, diags := Parse([]byte(src), "Capsule.toml", "")
	if diags.HasErrors() {
		t.Fatalf("refused:\n%s", render(diags))
	}
	if !m.Capabilities.ToolMiddleware {
		t.Error("the component's grant did not reach the capsule")
	}
	if g := m.Capabilities.Granted(); len(g) == 0 || g[0] != "tool_middleware = true" {
		t.Errorf("Granted() = %q, want tool_middleware first", g)
	}
}

// A key that is both an interceptor and a wide receiver draws one error, at
// the key, and a receiver's error says it is about reading.
func TestToolPlumbingReadErrorAtKey(t *testing.T) {
	src := head + "[subscribe]\n\"a.b\" = \"opaque\"\n\"tool.v1.execute.*\" = { wit = \"opaque\", handler = \"h\" }\n  \"tool.v1.request.*\" = \"opaque\"\n"
	_, diags := Parse([]byte(src), "Capsule.toml", "")
	wantAt(t, diags, Error, 6, 1, `[subscribe] interceptor "tool.v1.execute.*" would intercept`)
	wantAt(t, diags, Error, 7, 3, `[subscribe] "tool.v1.request.*" would let the capsule read tool.v1.request.execute`, ToolMiddlewareGrant)
	if n := len(find(diags, Error, `"tool.v1.execute.*"`)); n != 1 {
		t.Errorf("%d errors name tool.v1.execute.*, want 1:\n%s", n, render(diags))
	}
}
