package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/egress"
	"github.com/astrid-go/astrid/internal/engine/mcp"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/internal/host/ask"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

// The conformance suite's client half (issue 32.5): the suite starts a
// test server per scenario and runs a command with the server's URL as its
// last argument and the scenario in MCP_CONFORMANCE_SCENARIO. That command
// is this test binary again with mcpClientHarnessEnv set: it loads a
// capsule whose [[mcp_server]] is the suite's server into our MCP engine,
// on a real dispatcher, and calls the scenario's tool over the bus as a
// model's call would go. An OAuth scenario first logs in with the engine's
// own login (RunLogin), the authorization URL followed by an HTTP client
// instead of a browser: the suite's authorization server approves at once.

// mcpClientHarnessEnv, set to 1, makes this test binary the harness.
const mcpClientHarnessEnv = "ASTRID_TEST_MCP_CLIENT_HARNESS"

func init() {
	if os.Getenv(mcpClientHarnessEnv) != "1" {
		return
	}
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "harness: no server URL")
		os.Exit(2)
	}
	if err := runClientHarness(os.Args[len(os.Args)-1], os.Getenv("MCP_CONFORMANCE_SCENARIO")); err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// conformanceClientMetadata is the client metadata URL the suite's
// auth/basic-cimd scenario expects as the client id.
const conformanceClientMetadata = "https://conformance-test.local/client-metadata.json"

// harnessBudget bounds one scenario's run inside the suite's own timeout.
const harnessBudget = 25 * time.Second

// scenarioCalls is the tool call each scenario waits for ("" for none:
// the handshake and tools/list at load are the scenario).
var scenarioCalls = map[string]struct{ tool, args string }{
	"tools_call":                          {"add_numbers", `{"a":5,"b":3}`},
	"elicitation-sep1034-client-defaults": {"test_client_elicitation_defaults", `{}`},
	"sse-retry":                           {"test_reconnection", `{}`},
}

// memTokens is a TokenStore in memory: one run's login.
type memTokens struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (s *memTokens) Get(k string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[k]
	return v, ok, nil
}

func (s *memTokens) Set(k string, v []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[k] = v
	return nil
}

func (s *memTokens) Delete(k string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, k)
	return nil
}

// harnessFrontend answers every question the engine asks the person with
// the default it offers, and declines one it offers none for: the
// suite's elicitation asks the client to accept its defaults.
const harnessFrontend = "conformance-frontend"

func runClientHarness(serverURL, scenario string) error {
	ctx, cancel := context.WithTimeout(context.Background(), harnessBudget)
	defer cancel()
	u, err := url.Parse(serverURL)
	if err != nil {
		return fmt.Errorf("server url: %w", err)
	}
	dir, err := os.MkdirTemp("", "astrid-conformance-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	src := fmt.Sprintf("[package]\nname = \"conformance\"\nversion = \"0.1.0\"\ndescription = \"the MCP conformance suite's server\"\n\n[capabilities]\nnet = [%q]\n\n[[mcp_server]]\nid = \"conf\"\ntype = \"http\"\nurl = %q\n", u.Hostname(), serverURL)
	// A scenario with a client registered beforehand hands it over in
	// MCP_CONFORMANCE_CONTEXT: the manifest names it, as an operator's
	// would, the secret kept as a capsule secret.
	env := map[string]string{}
	var suiteCtx struct {
		ClientID      string `json:"client_id"`
		ClientSecret  string `json:"client_secret"`
		PrivateKeyPEM string `json:"private_key_pem"`
		IdPIssuer     string `json:"idp_issuer"`
		IdPClientID   string `json:"idp_client_id"`
		IdPIDToken    string `json:"idp_id_token"`
	}
	if c := os.Getenv("MCP_CONFORMANCE_CONTEXT"); c != "" {
		if err := json.Unmarshal([]byte(c), &suiteCtx); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	var secrets string
	if suiteCtx.ClientID != "" {
		src += fmt.Sprintf("oauth_client_id = %q\n", suiteCtx.ClientID)
		if strings.HasPrefix(scenario, "auth/client-credentials-") {
			// A machine-to-machine server: its operator knows it takes
			// the client credentials grant.
			src += "oauth_grant = \"client_credentials\"\n"
		}
		if suiteCtx.IdPIDToken != "" {
			// The person's enterprise IdP and the ID token it gave them.
			src += fmt.Sprintf("oauth_grant = \"enterprise\"\nidp_issuer = %q\nidp_client_id = %q\nidp_id_token = \"${secret:ID_TOKEN}\"\n", suiteCtx.IdPIssuer, suiteCtx.IdPClientID)
			secrets += "\n[env.ID_TOKEN]\ntype = \"secret\"\n"
			env["ID_TOKEN"] = suiteCtx.IdPIDToken
		}
		if suiteCtx.ClientSecret != "" {
			src += "oauth_client_secret = \"${secret:CLIENT_SECRET}\"\n"
			secrets += "\n[env.CLIENT_SECRET]\ntype = \"secret\"\n"
			env["CLIENT_SECRET"] = suiteCtx.ClientSecret
		}
		if suiteCtx.PrivateKeyPEM != "" {
			src += "oauth_client_key = \"${secret:CLIENT_KEY}\"\n"
			secrets += "\n[env.CLIENT_KEY]\ntype = \"secret\"\n"
			env["CLIENT_KEY"] = suiteCtx.PrivateKeyPEM
		}
	}
	if suiteCtx.ClientID == "" && strings.HasPrefix(scenario, "auth/") {
		// The client's Client ID Metadata Document, as its publisher
		// would host it (the suite's authorization servers never fetch
		// it); used only where the server says it takes such documents.
		src += fmt.Sprintf("oauth_client_metadata_url = %q\n", conformanceClientMetadata)
	}
	src += secrets
	m, diags := manifest.Parse([]byte(src), "Capsule.toml", dir)
	if err := diags.Err(false); err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b := bus.New(bus.Options{Logger: log})
	defer b.Close()
	d := dispatch.New(b, dispatch.Options{Logger: log})
	defer d.Close()
	// The operator allows the suite's loopback servers: the scenario's
	// authorization server listens on a port of its own, and the test
	// runs in a private network namespace where loopback holds nothing else.
	deps := host.Deps{Dispatcher: d, Cancels: host.NewCancels(), Scopes: host.NewScopes(), Logger: log, Workspace: dir,
		Egress: egress.Options{AllowLocal: []string{"localhost:*"}}, Bus: b, Elicits: ask.NewElicits([]string{harnessFrontend}, 0)}
	stopFrontend, err := harnessAnswers(d)
	if err != nil {
		return err
	}
	defer stopFrontend()
	h, err := host.NewCapsule(deps, m, m.Dir, env)
	if err != nil {
		return fmt.Errorf("host: %w", err)
	}
	tokens := &memTokens{m: map[string][]byte{}}
	opts := mcp.Options{Logger: log, Tokens: tokens, StartTimeout: 10 * time.Second, Env: env}
	load := func() (*capsule.Composite, error) {
		e, err := mcp.New(m.MCPServers[0], m, h, opts)
		if err != nil {
			return nil, err
		}
		comp := capsule.NewComposite(m, 0, log, e)
		if err := comp.Load(ctx); err != nil {
			return nil, err
		}
		return comp, nil
	}
	// What `astrid mcp login` does, the browser an HTTP client: run when
	// the engine says a login would help (a 401; a 403 asking for more
	// scope), as the person told so would. The engine bounds step-ups;
	// harnessLogins only stops a harness gone wrong.
	hc, err := h.SessionHTTPClient()
	if err != nil {
		return err
	}
	logins := 0
	login := func() error {
		if logins++; logins > harnessLogins {
			return fmt.Errorf("more than %d logins", harnessLogins)
		}
		_, err := mcp.RunLogin(ctx, mcp.LoginConfig{Capsule: m.ID(), Server: m.MCPServers[0], Env: env, Client: hc, Tokens: tokens, Show: browse})
		if err != nil {
			return fmt.Errorf("login: %w", err)
		}
		return nil
	}
	comp, err := load()
	for {
		var lr *mcp.LoginRequiredError
		if !errors.As(err, &lr) || lr.Hopeless {
			break
		}
		if lerr := login(); lerr != nil {
			return lerr
		}
		comp, err = load()
	}
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	defer func() { _ = comp.Unload(context.Background()) }()
	s := comp.Surface()
	acl := dispatch.CapsuleACL{ID: m.ID(), Publish: append(m.PublishPatterns(), s.Publish...), Subscribe: append(m.SubscribePatterns(), s.Subscribe...)}
	for _, i := range append(m.Interceptors(), s.Interceptors...) {
		acl.Interceptors = append(acl.Interceptors, dispatch.Interceptor{Pattern: i.Pattern, Handler: i.Handler, Priority: i.Priority})
	}
	if err := d.Register(acl, comp); err != nil {
		return err
	}
	call, ok := scenarioCalls[scenario]
	if !ok {
		// initialize and the auth scenarios: connecting (tools/list
		// included) is the scenario; an auth one then calls the suite's
		// tool when it has one.
		if !strings.HasPrefix(scenario, "auth/") {
			return nil
		}
		call.tool, call.args = firstTool(s.Publish), `{}`
		if call.tool == "" {
			return nil
		}
	}
	caller, err := harnessCaller(d)
	if err != nil {
		return err
	}
	defer caller.Close()
	for {
		if err := caller.call(ctx, "conf:"+call.tool, call.args); err != nil {
			return err
		}
		// A 403 for want of scope left a step-up on the stored login.
		if l, ok, _ := mcp.LoadLogin(tokens, m.MCPServers[0].ID); !ok || !l.StepUpPending() {
			return nil
		}
		if err := login(); err != nil {
			return err
		}
	}
}

// harnessLogins bounds the logins of one scenario's run.
const harnessLogins = 5

// firstTool is the first tool on a surface's result topics.
func firstTool(publish []string) string {
	for _, p := range publish {
		if t, ok := strings.CutPrefix(p, "tool.v1.execute."); ok && strings.HasSuffix(t, ".result") {
			return strings.TrimPrefix(strings.TrimSuffix(t, ".result"), "conf:")
		}
	}
	return ""
}

// harnessCaller calls tools over the bus as a client capsule.
type harnessCallerT struct {
	d       *dispatch.Dispatcher
	results *bus.Route
	n       int
}

const harnessClient = "conformance-client"

func harnessCaller(d *dispatch.Dispatcher) (*harnessCallerT, error) {
	if err := d.Register(dispatch.CapsuleACL{ID: harnessClient, Publish: []string{"tool.v1.execute.*"}, Subscribe: []string{ipc.ToolResultPattern}}, nopIntercept{}); err != nil {
		return nil, err
	}
	results, err := d.Subscribe(dispatch.Caller{Capsule: harnessClient, Principal: ipc.DefaultPrincipal}, ipc.ToolResultPattern, false)
	if err != nil {
		return nil, err
	}
	return &harnessCallerT{d: d, results: results}, nil
}

func (c *harnessCallerT) Close() { c.results.Close() }

// call calls tool and waits for its result.
func (c *harnessCallerT) call(ctx context.Context, tool, args string) error {
	c.n++
	id := fmt.Sprintf("c%d", c.n)
	p, err := ipc.EncodePayload(ipc.ToolExecuteRequest{CallID: id, ToolName: tool, Arguments: json.RawMessage(args)})
	if err != nil {
		return err
	}
	if _, err := c.d.Publish(dispatch.Caller{Capsule: harnessClient, Principal: ipc.DefaultPrincipal}, ipc.ToolExecuteTopic(tool), p); err != nil {
		return fmt.Errorf("call %s: %w", tool, err)
	}
	for {
		env, err := c.results.Recv(ctx)
		if err != nil {
			return fmt.Errorf("no result of %s: %w", tool, err)
		}
		var res ipc.ToolExecuteResult
		if err := json.Unmarshal(ipc.GuestBytes(env.Envelope.Payload), &res); err != nil {
			return fmt.Errorf("result of %s: %w", tool, err)
		}
		if res.CallID != id {
			continue
		}
		fmt.Printf("%s: error=%v %s\n", tool, res.Result.IsError, res.Result.Content)
		return nil
	}
}

// harnessAnswers is the frontend: it answers each elicitation with its
// default, or declines.
func harnessAnswers(d *dispatch.Dispatcher) (func(), error) {
	if err := d.Register(dispatch.CapsuleACL{ID: harnessFrontend, Publish: []string{ipc.ElicitResponseTopic("*")}, Subscribe: []string{ipc.ElicitRequestTopic}}, nopIntercept{}); err != nil {
		return nil, err
	}
	sub, err := d.Subscribe(dispatch.Caller{Capsule: harnessFrontend, Principal: ipc.DefaultPrincipal}, ipc.ElicitRequestTopic, true)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			env, err := sub.Recv(ctx)
			if err != nil {
				return
			}
			var q ipc.ElicitRequest
			if q.UnmarshalJSON(ipc.GuestBytes(env.Envelope.Payload)) != nil {
				continue
			}
			// No value at all is the person declining.
			b, _ := ipc.ElicitResponse{RequestID: q.RequestID, Value: q.Field.Default}.MarshalJSON()
			_, _ = d.Publish(dispatch.Caller{Capsule: harnessFrontend, Principal: ipc.DefaultPrincipal}, ipc.ElicitResponseTopic(q.RequestID), b)
		}
	}()
	return func() { cancel(); <-done; sub.Close() }, nil
}

// browse is the person's browser: it follows the authorization URL and
// its redirects, the last one to the login's loopback listener.
func browse(authURL string) error {
	resp, err := http.Get(authURL)
	if err != nil {
		return fmt.Errorf("following the authorization URL: %w", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

type nopIntercept struct{}

func (nopIntercept) Intercept(context.Context, dispatch.Invocation) (dispatch.Verdict, error) {
	return dispatch.Verdict{}, dispatch.ErrNotSupported
}

// The client suite against our MCP engine (the harness above): every
// failure not listed fails the test, and so does a listed one that passes.
func TestMCPConformanceClientSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the MCP conformance suite")
	}
	node, cli := conformanceSuite(t)
	if inPrivateNetwork(t, "TestMCPConformanceClientSuite") {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	cmd := exec.Command(node, cli, "client", "--command", exe, "--suite", "all", "--expected-failures", expectedFailures(t), "-o", out)
	cmd.Dir = out
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "FORCE_COLOR=0", mcpClientHarnessEnv+"=1")
	runConformanceSuite(t, "client", cmd)
}
