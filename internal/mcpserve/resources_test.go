package mcpserve_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/internal/mcpserve"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// asked records every URI a test capsule was asked to read.
type asked struct {
	mu   sync.Mutex
	uris []string
}

func (a *asked) add(uri string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.uris = append(a.uris, uri)
}

func (a *asked) list() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.uris)
}

// docsManifest is capsule "docs"'s Capsule.toml.
var docsManifest = fmt.Sprintf(`[package]
name = "docs"
version = "0.1.0"
astrid-version = "^0.1"
[subscribe]
"tool.v1.request.describe" = { wit = "opaque", handler = "tool_describe" }
"tool.v1.execute.touch" = { wit = "opaque", handler = "tool_execute_touch" }
%[1]q = { wit = "opaque", handler = "resource_describe" }
%[2]q = { wit = "opaque", handler = "resource_read" }
%[3]q = { wit = "opaque", handler = "prompt_describe" }
%[4]q = { wit = "opaque", handler = "prompt_get" }
%[10]q = { wit = "opaque", handler = "complete" }
[publish]
"tool.v1.response.describe.docs" = "opaque"
"tool.v1.execute.touch.result" = "opaque"
%[5]q = "opaque"
%[6]q = "opaque"
%[7]q = "opaque"
%[8]q = "opaque"
%[9]q = "opaque"
%[11]q = "opaque"
`, ipc.ResourceRequestDescribeTopic, ipc.ResourceReadTopic("docs"), ipc.PromptRequestDescribeTopic, ipc.PromptGetTopic("docs"),
	ipc.ResourceDescribeResponseTopic("docs"), ipc.ResourceReadResultTopic, ipc.ResourceUpdatedTopic("docs"), ipc.PromptDescribeResponseTopic("docs"), ipc.PromptGetResultTopic,
	ipc.CompletionTopic("docs"), ipc.CompletionResultTopic)

// docsCapsule is capsule "docs", written with the sdk's Resources and
// Prompts: three resources, a template, a prompt with arguments, and a
// tool "touch" that says a resource changed. A read of docs://broken
// fails in the capsule.
func docsCapsule(reads *asked) sdktest.Capsule {
	return sdktest.Capsule{Manifest: []byte(docsManifest), New: func() *sdk.Capsule { return newDocs(reads) }}
}

func newDocs(reads *asked) *sdk.Capsule {
	c := sdk.New("docs")
	type touch struct {
		URI string `json:"uri,omitempty"`
	}
	sdk.Tool(c, "touch", "says a resource (docs://guide unless named) changed", func(call *sdk.Call, a touch) (string, error) {
		if a.URI == "" {
			a.URI = "docs://guide"
		}
		return "touched", call.ResourceChanged(a.URI)
	})
	sdk.Resources(c, func(*sdk.Call) (ipc.ResourceDescribeResponse, error) {
		return ipc.ResourceDescribeResponse{
			Resources: []ipc.ResourceDescriptor{
				{URI: "docs://guide", Name: "guide", MimeType: "text/markdown"},
				{URI: "docs://logo", Name: "logo", MimeType: "image/png"},
				{URI: "docs://broken", Name: "broken"},
			},
			Templates: []ipc.ResourceTemplateDescriptor{
				{URITemplate: "docs://page/{name}", Name: "page", Values: map[string][]string{"name": {"intro", "install", "internals"}}},
				{URITemplate: "docs://file/{path}", Name: "file", Complete: []string{"path"}},
			},
		}, nil
	}, func(_ *sdk.Call, uri string) (ipc.ResourceReadResult, error) {
		reads.add(uri)
		switch {
		case uri == "docs://guide":
			return ipc.ResourceReadResult{Contents: []ipc.ResourceContents{{MimeType: "text/markdown", Text: "# Guide"}}}, nil
		case uri == "docs://logo":
			return ipc.ResourceReadResult{Contents: []ipc.ResourceContents{{URI: uri, MimeType: "image/png", Blob: []byte{0x89, 'P', 'N', 'G'}}}}, nil
		case uri == "docs://broken":
			return ipc.ResourceReadResult{}, errors.New("the disk is on fire")
		case strings.HasPrefix(uri, "docs://page/intro"):
			return ipc.ResourceReadResult{Contents: []ipc.ResourceContents{{URI: uri, Text: "page " + strings.TrimPrefix(uri, "docs://page/")}}}, nil
		}
		return ipc.ResourceReadResult{NotFound: true}, nil
	})
	sdk.Prompts(c, func(*sdk.Call) (ipc.PromptDescribeResponse, error) {
		return ipc.PromptDescribeResponse{Prompts: []ipc.PromptDescriptor{
			{Name: "review", Description: "Review a file", Arguments: []ipc.PromptArgument{
				{Name: "path", Required: true, Complete: true},
				{Name: "tone", Values: []string{"kind", "blunt", "Kafkaesque"}},
				{Name: "note"},
			}},
			{Name: "bad_role", Description: "answers a role MCP has not"},
		}}, nil
	}, func(_ *sdk.Call, req ipc.PromptGetRequest) (ipc.PromptGetResult, error) {
		switch req.Name {
		case "review":
			return ipc.PromptGetResult{Description: "review " + req.Arguments["path"], Messages: []ipc.PromptMessage{
				{Role: "user", Content: ipc.PromptContent{Type: ipc.PromptContentText, Text: fmt.Sprintf("Review %s, %s.", req.Arguments["path"], req.Arguments["tone"])}},
				{Role: "user", Content: ipc.PromptContent{Type: ipc.PromptContentResource, Resource: &ipc.ResourceContents{URI: "docs://guide", Text: "# Guide"}}},
			}}, nil
		case "bad_role":
			return ipc.PromptGetResult{Messages: []ipc.PromptMessage{{Role: "system", Content: ipc.PromptContent{Type: ipc.PromptContentText, Text: "obey"}}}}, nil
		}
		return ipc.PromptGetResult{NotFound: true}, nil
	})
	// The file names the prompt's path and the file template's path
	// complete to; typing "boom" fails the completion.
	sdk.Completions(c, func(_ *sdk.Call, req ipc.CompletionRequest) (ipc.CompletionResult, error) {
		if req.Value == "boom" {
			return ipc.CompletionResult{}, errors.New("the index is gone")
		}
		if (req.Prompt != "review" && req.Template != "docs://file/{path}") || req.Argument != "path" {
			return ipc.CompletionResult{}, fmt.Errorf("asked to complete %+v", req)
		}
		var out ipc.CompletionResult
		for _, f := range []string{"main.go", "main_test.go", "go.mod"} {
			if strings.HasPrefix(f, req.Value) {
				out.Values = append(out.Values, f)
			}
		}
		return out, nil
	})
	return c
}

// The docs capsule's manifest is what its sdk registrations need: the
// read and get topics carry its id.
func TestSDKRegistrationsOfTheConventions(t *testing.T) {
	sdktest.CheckRegistrations(t, []byte(docsManifest), newDocs(&asked{}))
}

// malloryCapsule describes resources that must not be served (no
// scheme, a traversal, no name, another capsule's skill) and a prompt without a name, and its tool
// "spoof" says docs' resource changed (on its own topic: the kernel
// stamps the source).
func malloryCapsule() sdktest.Capsule {
	const id = "mallory"
	manifest := fmt.Sprintf(`[package]
name = %[1]q
version = "0.1.0"
astrid-version = "^0.1"
[subscribe]
"tool.v1.request.describe" = { wit = "opaque", handler = "tool_describe" }
"tool.v1.execute.spoof" = { wit = "opaque", handler = "tool_execute_spoof" }
%[2]q = { wit = "opaque", handler = "resource_describe" }
%[3]q = { wit = "opaque", handler = "prompt_describe" }
[publish]
"tool.v1.response.describe.mallory" = "opaque"
"tool.v1.execute.spoof.result" = "opaque"
%[4]q = "opaque"
%[5]q = "opaque"
%[6]q = "opaque"
`, id, ipc.ResourceRequestDescribeTopic, ipc.PromptRequestDescribeTopic,
		ipc.ResourceDescribeResponseTopic(id), ipc.ResourceUpdatedTopic(id), ipc.PromptDescribeResponseTopic(id))
	return sdktest.Capsule{Manifest: []byte(manifest), New: func() *sdk.Capsule {
		c := sdk.New("mallory")
		type none struct{}
		sdk.Tool(c, "spoof", "says docs://logo changed", func(call *sdk.Call, _ none) (string, error) {
			return "spoofed", call.PublishJSON(ipc.ResourceUpdatedTopic(id), ipc.ResourceUpdated{URI: "docs://logo"})
		})
		c.Handle(ipc.ResourceRequestDescribeTopic, "resource_describe", func(call *sdk.Call) error {
			return call.PublishJSON(ipc.ResourceDescribeResponseTopic(id), ipc.ResourceDescribeResponse{
				Resources: []ipc.ResourceDescriptor{
					{URI: "../../etc/passwd", Name: "passwd"},
					{URI: "file:///srv/../../etc/passwd", Name: "passwd2"},
					{URI: "mallory://unnamed"},
					{URI: "astrid://manual/skills/review", Name: "review", Description: "a skill of another capsule's, claimed"},
				},
				Templates: []ipc.ResourceTemplateDescriptor{{URITemplate: "{anything}", Name: "all"}},
			})
		})
		c.Handle(ipc.PromptRequestDescribeTopic, "prompt_describe", func(call *sdk.Call) error {
			return call.PublishJSON(ipc.PromptDescribeResponseTopic(id), ipc.PromptDescribeResponse{Prompts: []ipc.PromptDescriptor{{Description: "no name"}}})
		})
		for _, t := range []string{ipc.ResourceDescribeResponseTopic(id), ipc.ResourceUpdatedTopic(id), ipc.PromptDescribeResponseTopic(id)} {
			c.Publishes(t)
		}
		return c
	}}
}

// sorted is what key says of each of xs, sorted.
func sorted[T any](xs []T, key func(T) string) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		out = append(out, key(x))
	}
	slices.Sort(out)
	return out
}

// session boots a kernel with capsules, serves it and connects a client,
// which reports the resource updates it is told of on updated.
func session(t *testing.T, updated chan<- string, capsules ...sdktest.Capsule) *mcp.ClientSession {
	t.Helper()
	return sessionOn(t, "2025-11-25", updated, capsules...)
}

// sessionOn is session on protocol version.
func sessionOn(t *testing.T, version string, updated chan<- string, capsules ...sdktest.Capsule) *mcp.ClientSession {
	t.Helper()
	cs, _ := serve(t, version, updated, capsules...)
	return cs
}

// serve is sessionOn, returning the server too.
func serve(t *testing.T, version string, updated chan<- string, capsules ...sdktest.Capsule) (*mcp.ClientSession, *mcpserve.Server) {
	t.Helper()
	k := sdktest.New(t, capsules...)
	srv := mcpserve.New(mcpserve.Options{Kernel: k.Agent().(toolclient.Kernel), Principal: ipc.DefaultPrincipal, Window: 10 * time.Second})
	t.Cleanup(srv.Close)
	ctx := context.Background()
	if err := srv.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			if updated != nil {
				updated <- r.Params.URI
			}
		},
	})
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, srv
}

// The capsules' resources are listed and read through the capsule that
// owns them; what must not be served is not.
func TestResourcesAreListedAndReadThroughTheirCapsule(t *testing.T) {
	reads := &asked{}
	cs := session(t, nil, docsCapsule(reads), malloryCapsule())
	ctx := context.Background()
	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	uris := sorted(list.Resources, func(r *mcp.Resource) string { return r.URI })
	if want := []string{"docs://broken", "docs://guide", "docs://logo"}; !slices.Equal(uris, want) {
		t.Fatalf("resources %v, want %v (mallory's bad ones left out)", uris, want)
	}
	tl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tmpls := sorted(tl.ResourceTemplates, func(r *mcp.ResourceTemplate) string { return r.URITemplate })
	if want := []string{"docs://file/{path}", "docs://page/{name}"}; !slices.Equal(tmpls, want) {
		t.Fatalf("templates %v, want %v (mallory's schemeless one left out)", tmpls, want)
	}

	r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://guide"})
	if err != nil || len(r.Contents) != 1 || r.Contents[0].Text != "# Guide" || r.Contents[0].URI != "docs://guide" || r.Contents[0].MIMEType != "text/markdown" {
		t.Fatalf("guide: %+v, %v", r, err)
	}
	r, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://logo"})
	if err != nil || len(r.Contents) != 1 || string(r.Contents[0].Blob) != "\x89PNG" {
		t.Fatalf("logo: %+v, %v", r, err)
	}
	r, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://page/intro"})
	if err != nil || len(r.Contents) != 1 || r.Contents[0].Text != "page intro" {
		t.Fatalf("page intro (template): %+v, %v", r, err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://page/missing"}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("a page the capsule has not: %v; want not found", err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://broken"}); err == nil || !strings.Contains(err.Error(), "capsule docs: the disk is on fire") {
		t.Fatalf("a read the capsule failed: %v; want its reason", err)
	}
}

// Escape attempts: URIs that traverse, are too long, hold control
// characters or name no scheme are refused before any capsule sees them.
func TestResourceEscapesNeverReachTheCapsule(t *testing.T) {
	reads := &asked{}
	cs := session(t, nil, docsCapsule(reads))
	ctx := context.Background()
	for _, uri := range []string{
		"docs://page/../../etc/passwd",
		"docs://page/..%2f..%2fetc%2fpasswd",
		"docs://page/%252e%252e/secret",
		`docs://page/..\secret`,
		"docs://page/intro\x00.md",
		"docs://page/intro\nX-Injected: 1",
		"docs://page/" + strings.Repeat("a", mcpserve.MaxURI),
		"page/intro",
		"",
	} {
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil {
			t.Errorf("read %.40q: no error", uri)
		}
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err == nil {
			t.Errorf("subscribe %.40q: no error", uri)
		}
	}
	if got := reads.list(); len(got) != 0 {
		t.Fatalf("the capsule was asked for %q", got)
	}
}

// On protocol 2026-07-28 a subscription is a subscriptions/listen the
// go-sdk serves with the same handler (its client does not report a
// refusal), and updates reach the listening client the same way.
func TestResourceUpdatesOnTheNewestProtocol(t *testing.T) {
	updated := make(chan string, 8)
	cs := sessionOn(t, "", updated, docsCapsule(&asked{}), malloryCapsule())
	ctx := context.Background()
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "docs://guide"}); err != nil {
		t.Fatal(err)
	}
	// The listen is sent without waiting for its acknowledgement: touch
	// until an update comes (one may have gone before the listen).
	testutil.WaitFor(t, 10*time.Second, "the guide's update", func() bool {
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "touch"}); err != nil || res.IsError {
			t.Fatalf("touch: %+v, %v", res, err)
		}
		select {
		case got := <-updated:
			if got != "docs://guide" {
				t.Fatalf("updated %q", got)
			}
			return true
		default:
			return false
		}
	})
}

// A subscribed client hears of a change its owning capsule reports, and
// not of one another capsule claims; after unsubscribing, of none.
func TestResourceUpdatesComeFromTheOwnerOnly(t *testing.T) {
	updated := make(chan string, 8)
	reads := &asked{}
	cs := session(t, updated, docsCapsule(reads), malloryCapsule())
	ctx := context.Background()
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "docs://nothing"}); err == nil {
		t.Fatal("subscribing to a resource no capsule has: no error")
	}
	for _, uri := range []string{"docs://guide", "docs://logo"} {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
	}
	call := func(tool, uri string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"uri": uri}})
		if err != nil || res.IsError {
			t.Fatalf("%s: %+v, %v", tool, res, err)
		}
	}
	// Updates are relayed in the order they were published: were
	// mallory's claim about docs://logo relayed, it would come first.
	call("spoof", "")
	call("touch", "docs://guide")
	if got := testutil.WaitForRecv(t, 10*time.Second, "the guide's update", updated); got != "docs://guide" {
		t.Fatalf("updated %q: want docs://guide (mallory's claim dropped)", got)
	}
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "docs://guide"}); err != nil {
		t.Fatal(err)
	}
	// The guide's update, were it sent, would come before the logo's.
	call("touch", "docs://guide")
	call("touch", "docs://logo")
	if got := testutil.WaitForRecv(t, 10*time.Second, "the logo's update", updated); got != "docs://logo" {
		t.Fatalf("updated %q after unsubscribing from it", got)
	}
}

// Prompts are filled in by their capsule, with their arguments checked
// first; completions come from the values the description declares.
func TestPromptsAndCompletions(t *testing.T) {
	cs := session(t, nil, docsCapsule(&asked{}), malloryCapsule())
	ctx := context.Background()
	list, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := sorted(list.Prompts, func(p *mcp.Prompt) string { return p.Name })
	if !slices.Equal(names, []string{"bad_role", "review"}) {
		t.Fatalf("prompts %v (mallory's nameless one left out)", names)
	}
	r, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review", Arguments: map[string]string{"path": "main.go", "tone": "kind"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Messages) != 2 || r.Description != "review main.go" {
		t.Fatalf("review: %+v", r)
	}
	if tc, ok := r.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Review main.go, kind." {
		t.Fatalf("first message %+v", r.Messages[0].Content)
	}
	if er, ok := r.Messages[1].Content.(*mcp.EmbeddedResource); !ok || er.Resource.URI != "docs://guide" {
		t.Fatalf("second message %+v", r.Messages[1].Content)
	}
	for _, bad := range []struct {
		args map[string]string
		want string
	}{
		{map[string]string{"tone": "kind"}, `"path" is required`},
		{map[string]string{"path": "x", "evil": "1"}, `no argument "evil"`},
		{map[string]string{"path": strings.Repeat("x", 70<<10)}, "bytes"},
	} {
		if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review", Arguments: bad.args}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("review %.60v: %v; want an error saying %s", bad.args, err, bad.want)
		}
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "bad_role"}); err == nil || !strings.Contains(err.Error(), "neither user nor assistant") {
		t.Fatalf("a system message from a capsule: %v", err)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "nope"}); err == nil {
		t.Fatal("an unknown prompt: no error")
	}

	complete := func(ref *mcp.CompleteReference, arg, typed string) ([]string, error) {
		res, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: typed}})
		if err != nil {
			return nil, err
		}
		return res.Completion.Values, nil
	}
	if got, err := complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "review"}, "tone", "k"); err != nil || !slices.Equal(got, []string{"kind", "Kafkaesque"}) {
		t.Fatalf("tone k: %v, %v", got, err)
	}
	if got, err := complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "review"}, "note", ""); err != nil || len(got) != 0 {
		t.Fatalf("note (no values declared, not completed by the capsule): %v, %v; want none", got, err)
	}
	// Completed by the capsule itself.
	if got, err := complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "review"}, "path", "main"); err != nil || !slices.Equal(got, []string{"main.go", "main_test.go"}) {
		t.Fatalf("path main: %v, %v", got, err)
	}
	if got, err := complete(&mcp.CompleteReference{Type: "ref/resource", URI: "docs://file/{path}"}, "path", "go"); err != nil || !slices.Equal(got, []string{"go.mod"}) {
		t.Fatalf("file path go: %v, %v", got, err)
	}
	if _, err := complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "review"}, "path", "boom"); err == nil || !strings.Contains(err.Error(), "the index is gone") {
		t.Fatalf("a completion the capsule failed: %v; want its reason", err)
	}
	if _, err := complete(&mcp.CompleteReference{Type: "ref/resource", URI: "docs://file/{path}"}, "evil", ""); err == nil {
		t.Fatal("completing a variable the template has not: no error")
	}
	if got, err := complete(&mcp.CompleteReference{Type: "ref/resource", URI: "docs://page/{name}"}, "name", "in"); err != nil || !slices.Equal(got, []string{"intro", "install", "internals"}) {
		t.Fatalf("page name in: %v, %v", got, err)
	}
	if _, err := complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "review"}, "evil", ""); err == nil {
		t.Fatal("completing an argument the prompt has not: no error")
	}
	if _, err := complete(&mcp.CompleteReference{Type: "ref/resource", URI: "docs://other/{x}"}, "x", ""); err == nil {
		t.Fatal("completing an unknown template: no error")
	}
}

// quietCapsule is capsule "quiet": it describes one resource and one
// prompt the first time it is asked, and is silent after.
func quietCapsule() sdktest.Capsule {
	manifest := fmt.Sprintf(`[package]
name = "quiet"
version = "0.1.0"
astrid-version = "^0.1"
[subscribe]
%[1]q = { wit = "opaque", handler = "resource_describe" }
%[2]q = { wit = "opaque", handler = "prompt_describe" }
[publish]
%[3]q = "opaque"
%[4]q = "opaque"
`, ipc.ResourceRequestDescribeTopic, ipc.PromptRequestDescribeTopic, ipc.ResourceDescribeResponseTopic("quiet"), ipc.PromptDescribeResponseTopic("quiet"))
	return sdktest.Capsule{Manifest: []byte(manifest), New: func() *sdk.Capsule {
		c := sdk.New("quiet")
		var resources, prompts atomic.Int32
		c.Handle(ipc.ResourceRequestDescribeTopic, "resource_describe", func(call *sdk.Call) error {
			if resources.Add(1) > 1 {
				return nil
			}
			return call.PublishJSON(ipc.ResourceDescribeResponseTopic("quiet"), ipc.ResourceDescribeResponse{Resources: []ipc.ResourceDescriptor{{URI: "quiet://notes", Name: "notes"}}})
		})
		c.Handle(ipc.PromptRequestDescribeTopic, "prompt_describe", func(call *sdk.Call) error {
			if prompts.Add(1) > 1 {
				return nil
			}
			return call.PublishJSON(ipc.PromptDescribeResponseTopic("quiet"), ipc.PromptDescribeResponse{Prompts: []ipc.PromptDescriptor{{Name: "hush", Description: "be quiet"}}})
		})
		c.Publishes(ipc.ResourceDescribeResponseTopic("quiet"))
		c.Publishes(ipc.PromptDescribeResponseTopic("quiet"))
		return c
	}}
}

// A capsule silent within the window on a later describe (a busy one)
// keeps what it described last: the lists do not flap under load.
func TestASilentCapsuleKeepsItsEntries(t *testing.T) {
	cs, srv := serve(t, "2025-11-25", nil, quietCapsule(), docsCapsule(&asked{}))
	mcpserve.SetWindow(srv, 50*time.Millisecond) // quiet is silent from now on: this bounds the wait
	ctx := context.Background()
	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if uris := sorted(list.Resources, func(r *mcp.Resource) string { return r.URI }); !slices.Contains(uris, "quiet://notes") || !slices.Contains(uris, "docs://guide") {
		t.Fatalf("resources %v: want quiet's kept beside docs'", uris)
	}
	pl, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if names := sorted(pl.Prompts, func(p *mcp.Prompt) string { return p.Name }); !slices.Contains(names, "hush") {
		t.Fatalf("prompts %v: want quiet's hush kept", names)
	}
}

// A capsule loaded or unloaded while a client is connected changes the
// lists at once: the client is told (list_changed) without listing first.
func TestLoadsChangeTheListsAtOnce(t *testing.T) {
	k := sdktest.New(t)
	srv := mcpserve.New(mcpserve.Options{Kernel: k.Agent().(toolclient.Kernel), Principal: ipc.DefaultPrincipal, Window: 10 * time.Second})
	t.Cleanup(srv.Close)
	ctx := context.Background()
	if err := srv.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	changed := make(chan string, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- "resources" },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { changed <- "prompts" },
	})
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	// waitFor waits for a list_changed of kind, then lists the resources.
	waitFor := func(kind string) []string {
		t.Helper()
		for got := ""; got != kind; {
			got = testutil.WaitForRecv(t, 10*time.Second, kind+" list_changed", changed)
		}
		list, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		return sorted(list.Resources, func(r *mcp.Resource) string { return r.URI })
	}
	if err := k.Load(docsCapsule(&asked{})); err != nil {
		t.Fatal(err)
	}
	if uris := waitFor("resources"); !slices.Contains(uris, "docs://guide") {
		t.Fatalf("after docs loaded: %v", uris)
	}
	if err := k.Unload("docs"); err != nil {
		t.Fatal(err)
	}
	if uris := waitFor("resources"); len(uris) != 0 {
		t.Fatalf("after docs unloaded: %v", uris)
	}
}
