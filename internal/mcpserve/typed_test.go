//lint:file-ignore SA1019 the client side of logging and sampling, which mcp serve still offers (SEP-2577 deprecates them)

package mcpserve_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/mcpserve"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// guard bounds each wait of these tests; they do not time anything.
const guard = time.Minute

var typedManifest = []byte(`
[package]
name = "typed"
version = "0.1.0"

[subscribe]
"tool.v1.request.describe" = { wit = "opaque", handler = "tool_describe" }
"tool.v1.execute.pic" = { wit = "opaque", handler = "tool_execute_pic" }
"tool.v1.execute.chatty" = { wit = "opaque", handler = "tool_execute_chatty" }
"tool.v1.execute.form" = { wit = "opaque", handler = "tool_execute_form" }
"tool.v1.execute.ask_model" = { wit = "opaque", handler = "tool_execute_ask_model" }
"agent.v1.tool.sample.reply.*" = "opaque"

[publish]
"tool.v1.response.describe.typed" = "opaque"
"tool.v1.execute.pic.result" = "opaque"
"tool.v1.execute.chatty.result" = "opaque"
"tool.v1.execute.form.result" = "opaque"
"tool.v1.execute.ask_model.result" = "opaque"
"agent.v1.tool.log" = "opaque"
"agent.v1.tool.sample" = "opaque"
`)

type none struct{}

// typedCapsule answers typed content (pic), logs (chatty), asks a form
// (form) and asks the client's model (ask_model).
func typedCapsule() *sdk.Capsule {
	c := sdk.New("typed content, logs, forms and sampling")
	sdk.ToolWithParts(c, "pic", "an image and a resource", func(*sdk.Call, none) (sdk.Result, error) {
		return sdk.Result{Parts: []ipc.ToolPart{
			{Type: ipc.ToolPartImage, MimeType: "image/png", Data: []byte("png")},
			{Type: ipc.ToolPartResource, URI: "test://r", MimeType: "text/plain", Text: "r"},
		}}, nil
	})
	sdk.Tool(c, "chatty", "logs", func(call *sdk.Call, _ none) (string, error) {
		var req ipc.ToolExecuteRequest
		if err := call.Decode(&req); err != nil {
			return "", err
		}
		for _, l := range []ipc.AgentToolLog{{Level: "debug", Message: "hidden"}, {Level: "info", Message: "one"}, {Level: "bogus", Message: "two"}, {Level: "error", Logger: "disk", Message: "three"}} {
			l.CallID, l.Name = req.CallID, req.ToolName
			if err := call.PublishJSON(ipc.AgentToolLogTopic, l); err != nil {
				return "", err
			}
		}
		return "logged", nil
	})
	sdk.Tool(c, "form", "asks a form", func(call *sdk.Call, _ none) (string, error) {
		ans, err := call.Elicit(hostapi.ElicitRequest{Key: "profile", Kind: hostapi.ElicitForm, Prompt: "Who?", Schema: []byte(
			`{"type":"object","properties":{"name":{"type":"string","default":"Ada"},"age":{"type":"integer"},"role":{"type":"string","oneOf":[{"const":"dev","title":"Developer"}]}},"required":["name"]}`)})
		if err != nil {
			return "", err
		}
		return string(ans.Content), nil
	})
	sdk.Tool(c, "ask_model", "asks the client's model", func(call *sdk.Call, _ none) (string, error) {
		r, err := sdk.Sample(call, ipc.AgentToolSample{SystemPrompt: "Be brief.", Messages: []ipc.SampleMessage{{Role: "user", Text: "hi"}}, MaxTokens: 7})
		if err != nil {
			return "", err
		}
		return r.Model + ": " + r.Text, nil
	})
	c.Publishes(ipc.AgentToolLogTopic)
	c.Publishes(ipc.AgentToolSampleTopic)
	c.Subscribes(ipc.AgentToolSampleReplyPattern)
	return c
}

// client is an outside MCP client of a Server over the kernel k.
type client struct {
	*mcp.ClientSession
	mu       sync.Mutex
	logs     []*mcp.LoggingMessageParams
	forms    []*mcp.ElicitParams
	samples  []*mcp.CreateMessageParams
	formBody map[string]any
}

func connect(t *testing.T, k *sdktest.Kernel, sampling func(string) bool, canSample bool) *client {
	t.Helper()
	srv := mcpserve.New(mcpserve.Options{Kernel: k.Agent().(toolclient.Kernel), Principal: ipc.DefaultPrincipal, Sampling: sampling})
	c := &client{formBody: map[string]any{"name": "Grace", "age": 85, "role": "dev"}}
	opts := &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			c.mu.Lock()
			c.logs = append(c.logs, r.Params)
			c.mu.Unlock()
		},
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.forms = append(c.forms, r.Params)
			if c.formBody == nil {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: c.formBody}, nil
		},
	}
	if canSample {
		//lint:ignore SA1019 the client's side of sampling, which mcp serve still asks
		opts.CreateMessageHandler = func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			c.mu.Lock()
			c.samples = append(c.samples, r.Params)
			c.mu.Unlock()
			return &mcp.CreateMessageResult{Role: "assistant", Model: "client-model", Content: &mcp.TextContent{Text: "hello"}}, nil
		}
	}
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "outside", Version: "1"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	c.ClientSession = cs
	return c
}

func (c *client) call(t *testing.T, tool string) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	// The level of log messages wanted, as protocol 2026-07-28 says it
	// (on each request; older clients set it with logging/setLevel).
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}, Meta: mcp.Meta{mcp.MetaKeyLogLevel: "info"}})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return strings.Join(out, "\n")
}

// TestServeTypedContentLogsFormsAndSampling: through a real kernel and
// the go-sdk's client, a tool's parts arrive as MCP image and embedded
// resource content; its log messages as notifications/message at the
// level the client set; its form as one elicitation of the form's schema,
// the client's answer reaching the tool; its sample request as the
// client's own sampling/createMessage, and refused, saying why, when the
// operator does not name the capsule or the client cannot sample.
func TestServeTypedContentLogsFormsAndSampling(t *testing.T) {
	k := sdktest.New(t, sdktest.Capsule{Manifest: typedManifest, New: typedCapsule})
	allowed := func(id string) bool { return id == "typed" }
	c := connect(t, k, allowed, true)

	res := c.call(t, "pic")
	if len(res.Content) != 2 {
		t.Fatalf("pic: %d items", len(res.Content))
	}
	img, ok1 := res.Content[0].(*mcp.ImageContent)
	emb, ok2 := res.Content[1].(*mcp.EmbeddedResource)
	if !ok1 || !ok2 || img.MIMEType != "image/png" || string(img.Data) != "png" || emb.Resource.URI != "test://r" || emb.Resource.Text != "r" {
		t.Fatalf("pic: %#v %#v", res.Content[0], res.Content[1])
	}

	if got := text(c.call(t, "chatty")); got != "logged" {
		t.Fatalf("chatty: %q", got)
	}
	testutil.WaitFor(t, guard, "three log messages", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.logs) >= 3
	})
	c.mu.Lock()
	var got []string
	for _, l := range c.logs {
		got = append(got, string(l.Level)+" "+l.Logger+" "+l.Data.(string))
	}
	c.mu.Unlock()
	if want := "info chatty one|info chatty two|error disk three"; strings.Join(got, "|") != want {
		t.Fatalf("log messages %q, want %q (debug below the level, an unknown level as info)", got, want)
	}

	if got := text(c.call(t, "form")); got != `{"age":85,"name":"Grace","role":"dev"}` {
		t.Fatalf("form: %q", got)
	}
	c.mu.Lock()
	schema, _ := json.Marshal(c.forms[0].RequestedSchema)
	c.mu.Unlock()
	for _, w := range []string{`"default":"Ada"`, `"oneOf":[{"const":"dev","title":"Developer"}]`, `"required":["name"]`, `"age":{"type":"integer"}`} {
		if !strings.Contains(string(schema), w) {
			t.Errorf("the elicitation's schema %s lacks %s", schema, w)
		}
	}
	// Declined by the client: the tool hears so.
	c.mu.Lock()
	c.formBody = nil
	c.mu.Unlock()
	if res := c.call(t, "form"); !res.IsError || !strings.Contains(text(res), "declined") {
		t.Fatalf("a declined form: %+v %q", res, text(res))
	}

	if got := text(c.call(t, "ask_model")); got != "client-model: hello" {
		t.Fatalf("ask_model: %q", got)
	}
	c.mu.Lock()
	p := c.samples[0]
	c.mu.Unlock()
	if p.MaxTokens != 7 || p.SystemPrompt != "Be brief." || len(p.Messages) != 1 || p.Messages[0].Content.(*mcp.TextContent).Text != "hi" {
		t.Fatalf("sampling request %+v", p)
	}

	for _, tc := range []struct {
		name      string
		sampling  func(string) bool
		canSample bool
		want      string
	}{
		{"the operator names no capsule", nil, true, `config.toml [mcp] sampling does not name capsule "typed"`},
		{"the operator names another", func(id string) bool { return id == "other" }, true, `does not name capsule "typed"`},
		{"the client cannot sample", allowed, false, "the MCP client does not offer sampling"},
	} {
		c := connect(t, k, tc.sampling, tc.canSample)
		res := c.call(t, "ask_model")
		if !res.IsError || !strings.Contains(text(res), tc.want) {
			t.Errorf("%s: %+v %q; want an error saying %q", tc.name, res, text(res), tc.want)
		}
		if len(c.samples) != 0 {
			t.Errorf("%s: the client was asked", tc.name)
		}
	}
}
