package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// fakeServerEnv, set in a child's environment, makes the test binary run
// as the fake MCP server instead of the tests.
const fakeServerEnv = "ASTRID_MCP_FAKE_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(fakeServerEnv) == "1" {
		runFakeServer()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// runFakeServer is an MCP server over stdio with one tool per behaviour
// the engine must handle.
func runFakeServer() {
	holdInWorkspace()
	s := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "1"}, nil)
	obj := map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}
	args := func(req *mcp.CallToolRequest) map[string]string {
		out := map[string]string{}
		_ = json.Unmarshal(req.Params.Arguments, &out)
		return out
	}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true}
	s.AddTool(&mcp.Tool{Name: "echo", Description: "Echo text", InputSchema: obj, Annotations: readOnly},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(args(req)["text"]), nil
		})
	s.AddTool(&mcp.Tool{Name: "fail", Description: "A tool error", InputSchema: obj},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r := text("it broke")
			r.IsError = true
			return r, nil
		})
	s.AddTool(&mcp.Tool{Name: "bad.name", Description: "Not a valid bus tool name", InputSchema: obj},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("?"), nil })
	s.AddTool(&mcp.Tool{Name: "block", Description: "Waits until cancelled", InputSchema: obj},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "fake: block started")
			<-ctx.Done()
			fmt.Fprintln(os.Stderr, "fake: block was cancelled")
			return nil, ctx.Err()
		})
	s.AddTool(&mcp.Tool{Name: "crash", Description: "Exits mid-call", InputSchema: obj},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(&mcp.Tool{Name: "env", Description: "Reads a variable", InputSchema: obj, Annotations: readOnly},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			v, ok := os.LookupEnv(args(req)["text"])
			return text(fmt.Sprintf("%v:%s", ok, v)), nil
		})
	s.AddTool(&mcp.Tool{Name: "spawn", Description: "Starts a grandchild in the group", InputSchema: obj},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			c := exec.Command("sleep", "300")
			if err := c.Start(); err != nil {
				return nil, err
			}
			return text(strconv.Itoa(c.Process.Pid)), nil
		})
	s.AddTool(&mcp.Tool{Name: "where", Description: "Says its working directory and pid", InputSchema: obj, Annotations: readOnly},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			wd, err := os.Getwd()
			if err != nil {
				return nil, err
			}
			return text(wd + " " + strconv.Itoa(os.Getpid())), nil
		})
	s.AddTool(&mcp.Tool{Name: "write", Description: "Writes text to where.txt, or to path", InputSchema: obj},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a := args(req)
			path := a["path"]
			if path == "" {
				path = "where.txt"
			}
			if err := os.WriteFile(path, []byte(a["text"]), 0o600); err != nil {
				r := text(err.Error())
				r.IsError = true
				return r, nil
			}
			return text("wrote " + path), nil
		})
	s.AddTool(&mcp.Tool{Name: hookTool, Description: "Interceptor hook", InputSchema: obj},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct {
				Hook    string          `json:"hook"`
				Payload json.RawMessage `json:"payload"`
			}
			_ = json.Unmarshal(req.Params.Arguments, &in)
			switch in.Hook {
			case "hook_deny":
				return text(`{"action":"deny","reason":"no thanks"}`), nil
			case "hook_final":
				return text(`{"action":"final"}`), nil
			case "hook_rewrite":
				return text(`{"action":"continue","payload":{"seen":` + string(in.Payload) + `}}`), nil
			case "hook_error":
				r := text("hook failed")
				r.IsError = true
				return r, nil
			}
			return text(""), nil
		})
	addFakeResources(s)
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "fake:", err)
	}
}

// addFakeResources gives the fake server resources the engine must
// serve or refuse (served_test.go): one it serves, one in the reserved
// astrid: scheme and one with a ".." segment, a resource whose contents
// claim an astrid: URI, a template whose read says the server's working
// directory, and a tool "grow" that adds a resource.
func addFakeResources(s *mcp.Server) {
	contents := func(uri, text string) *mcp.ReadResourceResult {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: text}}}
	}
	for _, r := range []struct{ uri, text, claims string }{
		{"fake://ok", "ok", ""},
		{"astrid://other/skills/x", "a skill of another capsule", ""},
		{"fake://a/../b", "past the directory", ""},
		{"fake://sneaky", "claims another's skill", "astrid://other/skills/x"},
	} {
		s.AddResource(&mcp.Resource{URI: r.uri, Name: r.uri}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return contents(cmp.Or(r.claims, r.uri), r.text), nil
		})
	}
	obj := map[string]any{"type": "object"}
	s.AddTool(&mcp.Tool{Name: "grow", Description: "Adds a resource (its list changes)", InputSchema: obj},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.AddResource(&mcp.Resource{URI: "fake://grown", Name: "grown"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return contents("fake://grown", "grown"), nil
			})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "grown"}}}, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "fake://where/{x}", Name: "where"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			wd, err := os.Getwd()
			if err != nil {
				return nil, err
			}
			return contents(req.Params.URI, wd), nil
		})
}

// Files in a fake server's working directory that hold its start, so that
// a test can see calls wait for one start (workspace_test.go): while
// holdFile exists the server has not answered the handshake; it says its
// pid in pidFile first.
const (
	holdFile = ".fake-hold"
	pidFile  = ".fake-pid"
)

func holdInWorkspace() {
	if _, err := os.Stat(holdFile); err != nil {
		return
	}
	if err := os.WriteFile(pidFile+".tmp", []byte(strconv.Itoa(os.Getpid())), 0o600); err == nil {
		_ = os.Rename(pidFile+".tmp", pidFile)
	}
	// Polled: the test removes the file when it has seen every call wait.
	for {
		if _, err := os.Stat(holdFile); err != nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
