package promptbuilder_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/capsules/fs"
	"github.com/astrid-go/astrid/capsules/promptbuilder"
	"github.com/astrid-go/astrid/capsules/session"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// builder is the prompt builder under test, with [env] values.
func builder(env map[string]string) sdktest.Capsule {
	return sdktest.Capsule{Manifest: promptbuilder.Manifest, New: promptbuilder.New, Config: env}
}

// answer is either kind of reply.
type answer struct {
	promptbuilder.Response
	Error string `json:"error"`
}

// client asks the prompt builder as an orchestrator would.
type client struct {
	t       *testing.T
	k       *sdktest.Kernel
	replies *sdktest.Replies
}

func newClient(t *testing.T, k *sdktest.Kernel, principal string) *client {
	return &client{t: t, k: k, replies: k.PromptListen(principal, promptbuilder.ResponseTopic)}
}

// ask publishes req and returns the reply carrying requestID (skipping any
// other request's).
func (c *client) ask(principal string, req any, requestID string) answer {
	c.t.Helper()
	c.k.PromptPublish(principal, req)
	for {
		_, body := c.replies.Next()
		var a answer
		if err := json.Unmarshal(body, &a); err != nil {
			c.t.Fatalf("reply %s does not decode: %v", body, err)
		}
		if a.RequestID == requestID {
			return a
		}
	}
}

// ok asks and fails the test on an error reply.
func (c *client) ok(req map[string]any) promptbuilder.Response {
	c.t.Helper()
	a := c.ask(ipc.DefaultPrincipal, req, req["request_id"].(string))
	if a.Error != "" {
		c.t.Fatalf("request %v answered an error: %s", req, a.Error)
	}
	if a.Tools == nil || a.Messages == nil {
		c.t.Fatalf("reply without tools or messages: %+v", a)
	}
	return a.Response
}

func toolNames(r promptbuilder.Response) []string {
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.Name)
	}
	return out
}

func TestRegistrationsMatchManifest(t *testing.T) {
	sdktest.CheckRegistrations(t, promptbuilder.Manifest, promptbuilder.New())
}

// The model is offered every capsule's tools, mutable ones included, with
// the manifest's reviewed descriptions; the catalogue is cached, served
// again without a fan-out, and collected afresh once the cache no longer
// names the capsules that answer describe.
func TestToolsAreCollectedAndCached(t *testing.T) {
	k := sdktest.New(t, builder(nil), sdktest.Capsule{Manifest: fs.Manifest, New: fs.New}, probeTools("probe-tools"))
	c := newClient(t, k, ipc.DefaultPrincipal)
	first := c.ok(map[string]any{"request_id": "r1", "messages": []ipc.Message{ipc.TextMessage(ipc.RoleUser, "hi")}})
	names := toolNames(first)
	for _, want := range []string{"read_file", "write_file", "probe_1"} {
		if !contains(names, want) {
			t.Fatalf("tools %v lack %s", names, want)
		}
	}
	for _, tl := range first.Tools {
		if tl.Name == "read_file" && (tl.Description == nil || *tl.Description == "" || len(tl.InputSchema) == 0) {
			t.Fatalf("read_file offered without a description or schema: %+v", tl)
		}
	}
	second := c.ok(map[string]any{"request_id": "r2", "messages": []ipc.Message{ipc.TextMessage(ipc.RoleUser, "again")}})
	if !reflect.DeepEqual(toolNames(second), names) {
		t.Fatalf("second catalogue %v, want the cached %v (probe_1: no second fan-out)", toolNames(second), names)
	}
}

// Tool names reach the model in the spelling LLM APIs accept (':' as
// "__"); a name that would not map back to itself is left out and logged,
// never offered under another tool's name.
func TestToolNamesAreSpelledForTheModel(t *testing.T) {
	k := sdktest.New(t, builder(nil), describer("mcp-like", "srv:look", "a_:b", "plain_tool"))
	c := newClient(t, k, ipc.DefaultPrincipal)
	names := toolNames(c.ok(hi("r1")))
	if !reflect.DeepEqual(names, []string{"srv__look", "plain_tool"}) {
		t.Fatalf("tools %v, want [srv__look plain_tool]", names)
	}
	if !strings.Contains(k.Logs(), `tool \"a_:b\" of mcp-like is not offered`) {
		t.Fatalf("the refused name is not logged:\n%s", k.Logs())
	}
}

// A cache collected for another set of capsules (one since removed or not
// yet installed) is never served, for any principal; one for the same set
// is, and a stale or future stamp is not.
func TestToolCacheIsKeyedByTheCapsuleSet(t *testing.T) {
	now := func() int64 { return timeNowMs() }
	desc := "from the cache"
	cache := func(responders []string, stamp int64) string {
		return promptbuilder.KeptToolCache(responders, stamp, []ipc.LLMToolDefinition{{Name: "cached_only", Description: &desc}})
	}
	set := []string{"astrid-capsule-fs", "probe-tools"}
	pb := builder(nil)
	// The kernel's capsules_loaded at boot reaches the default principal
	// only, so these seeds of other principals survive it.
	pb.KV = map[string]map[string]string{
		"alice": {promptbuilder.ToolCacheKey: cache(set, now())},
		"bob":   {promptbuilder.ToolCacheKey: cache([]string{"astrid-capsule-fs"}, now())},
		"carol": {promptbuilder.ToolCacheKey: cache(set, now()-2*promptbuilder.ToolCacheMaxAge.Milliseconds())},
		"dave":  {promptbuilder.ToolCacheKey: cache(set, now()+2*promptbuilder.ToolCacheMaxAge.Milliseconds())},
		// The tools line edited after it was hashed.
		"erin": {promptbuilder.ToolCacheKey: strings.Replace(cache(set, now()), "from the cache", "from the kache", 1)},
		// An older capsule's value: one JSON object, tools inside.
		"frank": {promptbuilder.ToolCacheKey: `{"responders":["astrid-capsule-fs","probe-tools"],"collected_unix_ms":` + fmt.Sprint(now()) +
			`,"tools":[{"name":"cached_only","description":"from the cache","input_schema":{"type":"object"}}]}`},
		ipc.DefaultPrincipal: {promptbuilder.ToolCacheKey: cache(set, now())},
	}
	k := sdktest.New(t, pb, sdktest.Capsule{Manifest: fs.Manifest, New: fs.New}, probeTools("probe-tools"))
	for _, tc := range []struct {
		principal string
		cached    bool
	}{
		{"alice", true},
		{"bob", false},                // collected before probe-tools was installed
		{"carol", false},              // older than ToolCacheMaxAge
		{"dave", false},               // stamped in the future
		{"erin", false},               // its tools do not match their hash
		{"frank", false},              // not a kept catalogue of this version
		{ipc.DefaultPrincipal, false}, // dropped on capsules_loaded at boot
	} {
		c := newClient(t, k, tc.principal)
		a := c.ask(tc.principal, map[string]any{"request_id": "r-" + tc.principal, "messages": []ipc.Message{ipc.TextMessage(ipc.RoleUser, "hi")}}, "r-"+tc.principal)
		if a.Error != "" {
			t.Fatalf("%s: %s", tc.principal, a.Error)
		}
		names := toolNames(a.Response)
		if got := contains(names, "cached_only"); got != tc.cached {
			t.Errorf("%s: tools %v; served from the cache: %v, want %v", tc.principal, names, got, tc.cached)
		}
		if !tc.cached && !contains(names, "read_file") {
			t.Errorf("%s: a fresh catalogue %v lacks read_file", tc.principal, names)
		}
	}
}

// A capsule that intercepts describe but never answers is named in the log,
// its tools are missing, the others are offered, and the partial catalogue
// is not cached (the next request asks again).
func TestSilentDescriberIsNamedAndNotCached(t *testing.T) {
	silent := sdktest.Capsule{Manifest: []byte(`[package]
name = "mute-tools"
version = "0.1.0"
astrid-version = "^0.1"

[subscribe]
"tool.v1.request.describe" = { wit = "opaque", handler = "describe_nothing" }
`), New: func() *sdkCapsule { return muteCapsule() }}
	k := sdktest.New(t, builder(nil), probeTools("probe-tools"), silent)
	c := newClient(t, k, ipc.DefaultPrincipal)
	first := c.ok(map[string]any{"request_id": "r1", "messages": []ipc.Message{ipc.TextMessage(ipc.RoleUser, "hi")}})
	if names := toolNames(first); !contains(names, "probe_1") {
		t.Fatalf("tools %v", names)
	}
	if !strings.Contains(k.Logs(), "mute-tools did not describe") {
		t.Fatalf("the silent capsule is not named in the log:\n%s", k.Logs())
	}
	second := c.ok(map[string]any{"request_id": "r2", "messages": []ipc.Message{ipc.TextMessage(ipc.RoleUser, "hi")}})
	if names := toolNames(second); !contains(names, "probe_2") {
		t.Fatalf("a partial catalogue was cached: %v", names)
	}
}

// AGENTS.md is preferred, ASTRID.md taken when it is absent, neither is
// fine; an oversized one is cut and says so.
func TestWorkspaceContextFiles(t *testing.T) {
	k := sdktest.New(t, builder(map[string]string{"system_prompt": "BASE PROMPT"}))
	c := newClient(t, k, ipc.DefaultPrincipal)
	write := func(name, text string) {
		t.Helper()
		writeFile(t, k.Workspace, name, text)
	}
	n := 0
	ask := func() string {
		n++
		return c.ok(map[string]any{"request_id": fmt.Sprintf("r%d", n), "messages": []ipc.Message{ipc.TextMessage(ipc.RoleUser, "hi")}}).SystemPrompt
	}
	if got := ask(); got != "BASE PROMPT" {
		t.Fatalf("no context files: system prompt %q", got)
	}
	write("ASTRID.md", "use tabs")
	if got := ask(); !strings.HasPrefix(got, "BASE PROMPT\n") || !strings.Contains(got, "(ASTRID.md)") || !strings.Contains(got, "use tabs") {
		t.Fatalf("ASTRID.md: %q", got)
	}
	write("AGENTS.md", "run make test")
	if got := ask(); !strings.Contains(got, "run make test") || strings.Contains(got, "use tabs") {
		t.Fatalf("AGENTS.md must win over ASTRID.md: %q", got)
	}
	write("AGENTS.md", "  \n")
	if got := ask(); !strings.Contains(got, "use tabs") {
		t.Fatalf("a blank AGENTS.md must fall back to ASTRID.md: %q", got)
	}
	write("AGENTS.md", strings.Repeat("é", promptbuilder.MaxContextFileBytes)) // twice the cap in bytes
	got := ask()
	if len(got) > promptbuilder.MaxContextFileBytes+1024 || !strings.Contains(got, "AGENTS.md was cut here") {
		t.Fatalf("an oversized AGENTS.md: %d bytes, cut note present: %v", len(got), strings.Contains(got, "was cut here"))
	}
	if !strings.Contains(got, "é\n[") {
		t.Fatalf("cut inside a rune")
	}
}

// Without an [env] system_prompt the built-in one describes the agent.
func TestDefaultSystemPrompt(t *testing.T) {
	k := sdktest.New(t, builder(nil))
	c := newClient(t, k, ipc.DefaultPrincipal)
	if got := c.ok(map[string]any{"request_id": "r1", "messages": []ipc.Message{}}).SystemPrompt; got != promptbuilder.DefaultSystemPrompt {
		t.Fatalf("system prompt %q", got)
	}
	if got := c.ok(map[string]any{"request_id": "r2", "system_prompt": "FROM REQUEST"}).SystemPrompt; got != "FROM REQUEST" {
		t.Fatalf("the request's system prompt: %q", got)
	}
}

// Static capsules' context files: into the system prompt for a holder of
// allow_prompt_injection, into the user-visible prefix otherwise.
func TestStaticContext(t *testing.T) {
	k := sdktest.New(t, builder(map[string]string{"system_prompt": "BASE"}),
		staticCapsule("static-trusted", true, "TRUSTED CONVENTIONS"),
		staticCapsule("static-plain", false, "PLAIN CONVENTIONS"))
	c := newClient(t, k, ipc.DefaultPrincipal)
	r := c.ok(map[string]any{"request_id": "r1", "messages": []ipc.Message{ipc.TextMessage(ipc.RoleUser, "hi")}})
	if !strings.HasPrefix(r.SystemPrompt, "BASE\n") || !strings.Contains(r.SystemPrompt, "TRUSTED CONVENTIONS") || strings.Contains(r.SystemPrompt, "PLAIN") {
		t.Fatalf("system prompt %q", r.SystemPrompt)
	}
	if !strings.Contains(r.UserContextPrefix, "PLAIN CONVENTIONS") || strings.Contains(r.UserContextPrefix, "TRUSTED") {
		t.Fatalf("user context prefix %q", r.UserContextPrefix)
	}
}

// History: the request's messages when it has some; else, with a session
// id, the session store's; with neither, none.
func TestHistory(t *testing.T) {
	k := sdktest.New(t, builder(nil), sdktest.Capsule{Manifest: session.Manifest, New: session.New})
	stored := []ipc.Message{ipc.TextMessage(ipc.RoleUser, "stored question"), ipc.TextMessage(ipc.RoleAssistant, "stored answer")}
	k.SessionPublish(ipc.DefaultPrincipal, session.AppendTopic, map[string]any{"session_id": "s1", "messages": stored})
	c := newClient(t, k, ipc.DefaultPrincipal)
	if got := c.ok(map[string]any{"request_id": "r1", "session_id": "s1"}); !reflect.DeepEqual(got.Messages, stored) || got.SessionID != "s1" {
		t.Fatalf("from the session: %+v", got)
	}
	given := []ipc.Message{ipc.TextMessage(ipc.RoleUser, "given")}
	if got := c.ok(map[string]any{"request_id": "r2", "session_id": "s1", "messages": given}); !reflect.DeepEqual(got.Messages, given) {
		t.Fatalf("the request's own messages: %+v", got.Messages)
	}
	if got := c.ok(map[string]any{"request_id": "r3"}); len(got.Messages) != 0 {
		t.Fatalf("no session, no messages: %+v", got.Messages)
	}
}

// Without a session store loaded there is no history to fetch: the request
// is assembled with none rather than refused.
func TestHistoryWithoutSessionStore(t *testing.T) {
	k := sdktest.New(t, builder(nil))
	c := newClient(t, k, ipc.DefaultPrincipal)
	if got := c.ok(map[string]any{"request_id": "r1", "session_id": "s1"}); len(got.Messages) != 0 || got.SessionID != "s1" {
		t.Fatalf("reply %+v", got)
	}
}

// Bad requests are answered with an error, echoing the ids that could be
// read, so the orchestrator fails fast instead of waiting.
func TestBadRequestsAreAnsweredWithAnError(t *testing.T) {
	k := sdktest.New(t, builder(nil))
	c := newClient(t, k, ipc.DefaultPrincipal)
	for _, tc := range []struct {
		name       string
		req        any
		id, sessID string
		want       string
	}{
		{"no request id", map[string]any{"session_id": "s1"}, "", "s1", "missing request_id"},
		{"a dot in the request id", map[string]any{"request_id": "r.1", "session_id": "s1"}, "r.1", "s1", "request_id"},
		{"a request id too long", map[string]any{"request_id": strings.Repeat("r", 129)}, strings.Repeat("r", 129), "", "request_id"},
		{"a path as session id", map[string]any{"request_id": "r2", "session_id": "../etc"}, "r2", "../etc", "session_id"},
		{"messages not a list", map[string]any{"request_id": "r3", "session_id": "s3", "messages": "nope"}, "r3", "s3", "invalid request"},
		{"a message without a role", map[string]any{"request_id": "r4", "messages": []any{map[string]any{"content": 7}}}, "r4", "", "invalid request"},
		{"wrapped, with a bad id", map[string]any{"data": map[string]any{"request_id": "r 5"}}, "r 5", "", "request_id"},
		{"not an object", `["r6"]`, "", "", "invalid request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := c.ask(ipc.DefaultPrincipal, tc.req, tc.id)
			if a.Error == "" || !strings.Contains(a.Error, tc.want) || a.SessionID != tc.sessID || a.Tools != nil {
				t.Fatalf("reply %+v: want an error mentioning %q for session %q", a, tc.want, tc.sessID)
			}
		})
	}
	// The {"data": …} wrapping of older SDKs is accepted.
	if a := c.ask(ipc.DefaultPrincipal, map[string]any{"data": map[string]any{"request_id": "w1"}}, "w1"); a.Error != "" {
		t.Fatalf("wrapped request: %s", a.Error)
	}
}

// after_build is published after the answer, with what was sent.
func TestAfterBuildNotice(t *testing.T) {
	k := sdktest.New(t, builder(map[string]string{"system_prompt": "BASE"}))
	notices := k.PromptListen(ipc.DefaultPrincipal, promptbuilder.AfterBuildTopic)
	c := newClient(t, k, ipc.DefaultPrincipal)
	r := c.ok(map[string]any{"request_id": "r1", "session_id": "s1"})
	_, body := notices.Next()
	var n promptbuilder.AfterBuild
	if err := json.Unmarshal(body, &n); err != nil || n.RequestID != "r1" || n.SessionID != "s1" || n.SystemPrompt != r.SystemPrompt {
		t.Fatalf("after_build %s (%v)", body, err)
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// The catalogue is spliced into the encoded response: a prompt and a
// message that spell the field it replaces are carried intact, and the
// tools are the catalogue, on the first turn and from the cache.
func TestACatalogueSplicedIntoAPromptThatSpellsItsField(t *testing.T) {
	trap := `x","tools":null,"messages":[]} ,"tools":null,"messages":`
	k := sdktest.New(t, builder(map[string]string{"system_prompt": trap}), probeTools("probe-tools"))
	c := newClient(t, k, ipc.DefaultPrincipal)
	for _, id := range []string{"r1", "r2"} {
		r := c.ok(map[string]any{"request_id": id, "messages": []ipc.Message{ipc.TextMessage(ipc.RoleUser, trap)}})
		if !strings.HasPrefix(r.SystemPrompt, trap) || len(r.Messages) != 1 || !textIs(r.Messages[0], trap) {
			t.Fatalf("%s: prompt %q, messages %+v", id, r.SystemPrompt, r.Messages)
		}
		if names := toolNames(r); !contains(names, "probe_1") {
			t.Fatalf("%s: tools %v", id, names)
		}
	}
}

func textIs(m ipc.Message, want string) bool {
	s, ok := m.Text()
	return ok && s == want
}
