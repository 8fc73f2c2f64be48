package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/engine/mcp/mcptest"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

// everythingManifest is a capsule running the real server-everything
// (its npm modules readable, the workspace its `*`).
func everythingManifest(t *testing.T, npm mcptest.Servers) *manifest.Manifest {
	t.Helper()
	modules := npm.Everything[:strings.LastIndex(npm.Everything, "/node_modules/")+len("/node_modules")]
	src := fmt.Sprintf(`[package]
name = "mcp-everything"
version = "0.1.0"
description = "server-everything"

[capabilities]
host_process = ["node"]
fs_read = [%q, "*"]

[[mcp_server]]
id = "everything"
type = "stdio"
command = "node"
args = [%q, "stdio"]
`, modules, npm.Everything)
	m, diags := manifest.Parse([]byte(src), "Capsule.toml", t.TempDir())
	if err := diags.Err(false); err != nil {
		t.Fatal(err)
	}
	return m
}

// conventionClient is a capsule that uses the resource, prompt and
// completion conventions, as `astrid mcp serve` does.
const conventionClient = "convention-client"

func registerConventionClient(t *testing.T, r *rig) {
	t.Helper()
	acl := dispatch.CapsuleACL{ID: conventionClient,
		Publish: []string{ipc.ResourceRequestDescribeTopic, ipc.ResourceReadTopic("*"), ipc.PromptRequestDescribeTopic, ipc.PromptGetTopic("*"), ipc.CompletionTopic("*")},
		Subscribe: []string{ipc.ResourceDescribeResponseTopic("*"), ipc.ResourceReadResultTopic, ipc.PromptDescribeResponseTopic("*"),
			ipc.PromptGetResultTopic, ipc.CompletionResultTopic},
	}
	if err := r.d.Register(acl, nopTarget{}); err != nil {
		t.Fatal(err)
	}
}

var asks atomic.Int64

// conventionAsk publishes req on topic (a request when replyTo is set,
// else a fan-out) and decodes the first answer on answerTopic from the
// capsule into out.
func conventionAsk(t *testing.T, r *rig, topic, replyTo, answerTopic string, req, out any) {
	t.Helper()
	conventionAskAs(t, r, dispatch.Caller{Capsule: conventionClient, Principal: ipc.DefaultPrincipal}, topic, replyTo, answerTopic, req, out)
}

// conventionAskAs is conventionAsk from caller (a request scope's).
func conventionAskAs(t *testing.T, r *rig, caller dispatch.Caller, topic, replyTo, answerTopic string, req, out any) {
	t.Helper()
	sub, err := r.d.Subscribe(caller, answerTopic, false)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []dispatch.Kind
	if replyTo != "" {
		kinds = append(kinds, dispatch.RequestOf(dispatch.Request{ReplyTo: replyTo, CorrelationID: fmt.Sprintf("c%d", asks.Add(1))}))
	}
	if _, err := r.d.Publish(caller, topic, body, kinds...); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	for {
		d, err := sub.Recv(ctx)
		if err != nil {
			t.Fatalf("no answer on %s to %s: %v\nlogs:\n%s", answerTopic, topic, err, r.logs)
		}
		payload := ipc.GuestBytes(d.Envelope.Payload)
		if f, ok := ipc.AsRequestFailed(payload); ok && d.Envelope.SourceID == ipc.KernelSourceID {
			t.Fatalf("the request on %s failed: %+v\nlogs:\n%s", topic, f, r.logs)
		}
		if d.Envelope.SourceID != r.comp.ID() {
			continue
		}
		if err := json.Unmarshal(payload, out); err != nil {
			t.Fatalf("answer on %s: %v: %s", answerTopic, err, payload)
		}
		return
	}
}

// TestMCPServersResourcesAndPromptsOnTheConventions: the real
// server-everything's resources, templates and prompts are described on
// the resource and prompt conventions by its capsule, and a read (text
// and binary, through a template), a get with arguments and a completion
// are answered by the server.
func TestMCPServersResourcesAndPromptsOnTheConventions(t *testing.T) {
	npm := mcptest.NPM(t)
	r := newRig(t, everythingManifest(t, npm), Options{})
	registerConventionClient(t, r)

	var res ipc.ResourceDescribeResponse
	conventionAsk(t, r, ipc.ResourceRequestDescribeTopic, "", ipc.ResourceDescribeResponseTopic(r.comp.ID()), struct{}{}, &res)
	if len(res.Resources) == 0 {
		t.Fatalf("no resources described: %+v", res)
	}
	var static string
	for _, d := range res.Resources {
		if strings.HasPrefix(d.URI, "demo://resource/static/document/") && static == "" {
			static = d.URI
		}
		if strings.HasPrefix(strings.ToLower(d.URI), "astrid:") {
			t.Errorf("a resource in the reserved scheme was described: %s", d.URI)
		}
	}
	if static == "" {
		t.Fatalf("no static document among %+v", res.Resources)
	}
	tmpls := map[string]ipc.ResourceTemplateDescriptor{}
	for _, d := range res.Templates {
		tmpls[d.URITemplate] = d
	}
	blob, ok := tmpls["demo://resource/dynamic/blob/{resourceId}"]
	if _, text := tmpls["demo://resource/dynamic/text/{resourceId}"]; !ok || !text {
		t.Fatalf("templates %+v, want the text and blob ones", res.Templates)
	}
	if !slices.Equal(blob.Complete, []string{"resourceId"}) {
		t.Errorf("blob template completes %v, want resourceId (the server offers completions)", blob.Complete)
	}

	read := func(uri string) ipc.ResourceReadResult {
		t.Helper()
		var out ipc.ResourceReadResult
		conventionAsk(t, r, ipc.ResourceReadTopic(r.comp.ID()), ipc.ResourceReadResultTopic, ipc.ResourceReadResultTopic, ipc.ResourceReadRequest{RequestID: "r-" + uri, URI: uri}, &out)
		if out.RequestID != "r-"+uri {
			t.Errorf("read of %s echoed request id %q", uri, out.RequestID)
		}
		return out
	}
	if got := read(static); got.Error != "" || len(got.Contents) != 1 || got.Contents[0].Text == "" || got.Contents[0].URI != static {
		t.Errorf("read of %s: %+v", static, got)
	}
	if got := read("demo://resource/dynamic/text/7"); len(got.Contents) != 1 || !strings.Contains(got.Contents[0].Text, "Resource 7: This is a plaintext resource") {
		t.Errorf("text template read: %+v", got)
	}
	if got := read("demo://resource/dynamic/blob/3"); len(got.Contents) != 1 || got.Contents[0].Text != "" || !strings.Contains(string(got.Contents[0].Blob), "Resource 3: This is a base64 blob") {
		t.Errorf("blob template read: %+v", got)
	}
	if got := read("demo://nothing/here"); !got.NotFound {
		t.Errorf("read of a URI no server has: %+v, want not found", got)
	}
	if got := read("demo://resource/static/document/../../../etc/passwd"); got.Error == "" || len(got.Contents) > 0 {
		t.Errorf("a traversal was read: %+v", got)
	}

	var prompts ipc.PromptDescribeResponse
	conventionAsk(t, r, ipc.PromptRequestDescribeTopic, "", ipc.PromptDescribeResponseTopic(r.comp.ID()), struct{}{}, &prompts)
	byName := map[string]ipc.PromptDescriptor{}
	for _, p := range prompts.Prompts {
		byName[p.Name] = p
	}
	args, ok := byName["everything:args-prompt"]
	if !ok || len(args.Arguments) != 2 || args.Arguments[0].Name != "city" || !args.Arguments[0].Required {
		t.Fatalf("prompts %+v, want everything:args-prompt with a required city", prompts.Prompts)
	}
	var got ipc.PromptGetResult
	conventionAsk(t, r, ipc.PromptGetTopic(r.comp.ID()), ipc.PromptGetResultTopic, ipc.PromptGetResultTopic,
		ipc.PromptGetRequest{RequestID: "g1", Name: "everything:args-prompt", Arguments: map[string]string{"city": "Lisbon", "state": "Lx"}}, &got)
	if got.Error != "" || len(got.Messages) != 1 || got.Messages[0].Role != "user" || got.Messages[0].Content.Text != "What's weather in Lisbon, Lx?" {
		t.Errorf("get: %+v", got)
	}

	var done ipc.CompletionResult
	conventionAsk(t, r, ipc.CompletionTopic(r.comp.ID()), ipc.CompletionResultTopic, ipc.CompletionResultTopic,
		ipc.CompletionRequest{RequestID: "k1", Prompt: "everything:completable-prompt", Argument: "name", Value: "", Context: map[string]string{"department": "Sales"}}, &done)
	if done.Error != "" || !slices.Equal(done.Values, []string{"David", "Eve", "Frank"}) {
		t.Errorf("completion: %+v", done)
	}
}

// TestServedResourcesRefuseEscapes: a server's resource in the reserved
// astrid: scheme or with a ".." segment is not described, and a read
// naming one, one of another capsule's scheme, a traversal, or returning
// contents that claim an astrid: URI is refused, never passed on; a read
// in a request's scope goes to the server of that workspace, as a tool
// call does.
func TestServedResourcesRefuseEscapes(t *testing.T) {
	r := newRig(t, fakeManifest(t, ""), Options{})
	registerConventionClient(t, r)
	var res ipc.ResourceDescribeResponse
	conventionAsk(t, r, ipc.ResourceRequestDescribeTopic, "", ipc.ResourceDescribeResponseTopic(r.comp.ID()), struct{}{}, &res)
	var uris []string
	for _, d := range res.Resources {
		uris = append(uris, d.URI)
	}
	slices.Sort(uris)
	if !slices.Equal(uris, []string{"fake://ok", "fake://sneaky"}) {
		t.Fatalf("described %v, want fake://ok and fake://sneaky (the astrid: and .. ones refused)", uris)
	}
	if len(res.Templates) != 1 || res.Templates[0].URITemplate != "fake://where/{x}" || len(res.Templates[0].Complete) != 0 {
		t.Fatalf("templates %+v, want fake://where/{x}, completed by no one (the fake offers no completions)", res.Templates)
	}
	read := func(scope uint64, uri string) ipc.ResourceReadResult {
		t.Helper()
		var out ipc.ResourceReadResult
		caller := dispatch.Caller{Capsule: conventionClient, Principal: ipc.DefaultPrincipal, Scope: scope}
		conventionAskAs(t, r, caller, ipc.ResourceReadTopic(r.comp.ID()), ipc.ResourceReadResultTopic, ipc.ResourceReadResultTopic, ipc.ResourceReadRequest{URI: uri}, &out)
		return out
	}
	for _, c := range []struct {
		uri      string
		notFound bool
		want     string // in the error
	}{
		{uri: "astrid://other/skills/x", notFound: true},
		{uri: "ASTRID://other/skills/x", notFound: true},
		{uri: "fake://a/../b", want: `".." path segment`},
		{uri: "fake://where/..%2f..%2fetc", want: `".." path segment`},
		{uri: "fake://where/%252e%252e", want: `".." path segment`},
		{uri: "fake://where/a\nb", want: "control character"},
		{uri: "fake://" + strings.Repeat("a", ipc.MaxResourceURI), want: "bytes; the longest served is"},
		{uri: "fake://sneaky", want: "astrid: scheme"},
		{uri: "fake://elsewhere", notFound: true},
	} {
		got := read(0, c.uri)
		if len(got.Contents) > 0 || got.NotFound != c.notFound || !strings.Contains(got.Error, c.want) || (c.want != "") != (got.Error != "") {
			t.Errorf("read of %.40q: %+v; want not found %v, error with %q", c.uri, got, c.notFound, c.want)
		}
	}
	if got := read(0, "fake://ok"); len(got.Contents) != 1 || got.Contents[0].Text != "ok" {
		t.Errorf("read of fake://ok: %+v", got)
	}
	if got := read(0, "fake://where/home"); len(got.Contents) != 1 || got.Contents[0].Text != r.ws {
		t.Errorf("read in the kernel's workspace: %+v, want %s", got, r.ws)
	}
	other := realTempDir(t)
	if got := read(r.openScope(other), "fake://where/there"); len(got.Contents) != 1 || got.Contents[0].Text != other {
		t.Errorf("read in a request's workspace: %+v, want %s", got, other)
	}

	// The server adds a resource: its list_changed makes the engine list
	// again, and the next describe and read have it.
	if res := r.roundTrip("fake:grow", "grow-1", `{}`); res.IsError {
		t.Fatalf("grow: %+v", res)
	}
	waitFor(t, "the grown resource described", func() bool {
		var res ipc.ResourceDescribeResponse
		conventionAsk(t, r, ipc.ResourceRequestDescribeTopic, "", ipc.ResourceDescribeResponseTopic(r.comp.ID()), struct{}{}, &res)
		return slices.ContainsFunc(res.Resources, func(d ipc.ResourceDescriptor) bool { return d.URI == "fake://grown" })
	})
	if got := read(0, "fake://grown"); len(got.Contents) != 1 || got.Contents[0].Text != "grown" {
		t.Errorf("read of the grown resource: %+v", got)
	}
}

// A capsule whose code serves reads too (its manifest intercepts its read
// topic) gets no "not found" from the engine for a URI no server of it
// has: both are asked at once, and the code's answer must not lose to
// the engine's. Here the code (the hook tool) answers nothing, so the
// request ends in the kernel's timeout; a URI the server has is answered.
func TestServedLeavesTheCodesURIsToTheCode(t *testing.T) {
	m := fakeManifest(t, fmt.Sprintf("\n[subscribe]\n%q = { wit = \"opaque\", handler = \"code_read\" }\n", ipc.ResourceReadTopic("fake-capsule")))
	r := newRig(t, m, Options{})
	registerConventionClient(t, r)
	var ok ipc.ResourceReadResult
	conventionAsk(t, r, ipc.ResourceReadTopic(r.comp.ID()), ipc.ResourceReadResultTopic, ipc.ResourceReadResultTopic, ipc.ResourceReadRequest{URI: "fake://ok"}, &ok)
	if len(ok.Contents) != 1 || ok.Contents[0].Text != "ok" {
		t.Fatalf("read of the server's own resource: %+v", ok)
	}
	caller := dispatch.Caller{Capsule: conventionClient, Principal: ipc.DefaultPrincipal}
	sub, err := r.d.Subscribe(caller, ipc.ResourceReadResultTopic, false)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	body, _ := json.Marshal(ipc.ResourceReadRequest{URI: "code://mine"})
	if _, err := r.d.Publish(caller, ipc.ResourceReadTopic(r.comp.ID()), body,
		dispatch.RequestOf(dispatch.Request{ReplyTo: ipc.ResourceReadResultTopic, CorrelationID: "code-1", Timeout: time.Second})); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	d, err := sub.Recv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f, failed := ipc.AsRequestFailed(ipc.GuestBytes(d.Envelope.Payload))
	if !failed || f.Reason != ipc.FailTimeout {
		t.Fatalf("answer from %s: %s; want only the kernel's timeout (the engine leaves code://mine to the code)", d.Envelope.SourceID, d.Envelope.Payload)
	}
}
