package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

// hangGuard bounds every wait in these tests so that a bug fails the test
// instead of hanging it; it asserts nothing about speed.
const hangGuard = 60 * time.Second

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.WaitFor(t, hangGuard, what, cond)
}

// rig is one capsule with one MCP engine on a real dispatcher, and a client
// capsule that calls its tools and watches the answers.
type rig struct {
	t       *testing.T
	bus     *bus.Bus
	d       *dispatch.Dispatcher
	cancels *host.Cancels
	scopes  *host.Scopes
	ws      string // the kernel's workspace
	comp    *capsule.Composite
	engine  *Engine
	wire    *testutil.SyncBuffer
	logs    *testutil.SyncBuffer
	results *bus.Route
}

const clientID = "client"

// fakeManifest is a capsule whose server is this test binary.
func fakeManifest(t *testing.T, extra string) *manifest.Manifest {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf(`
[package]
name = "fake-capsule"
version = "0.1.0"
description = "A fake MCP capsule"

[capabilities]
host_process = [%q]

[[mcp_server]]
id = "fake"
type = "stdio"
command = %q
%s`, exe, exe, extra)
	m, diags := manifest.Parse([]byte(src), "Capsule.toml", t.TempDir())
	if err := diags.Err(false); err != nil {
		t.Fatal(err)
	}
	return m
}

func newRig(t *testing.T, m *manifest.Manifest, opts Options) *rig {
	t.Helper()
	r := &rig{t: t, wire: &testutil.SyncBuffer{}, logs: &testutil.SyncBuffer{}, cancels: host.NewCancels(), scopes: host.NewScopes(), ws: realTempDir(t)}
	log := slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r.bus = bus.New(bus.Options{Logger: log})
	r.d = dispatch.New(r.bus, dispatch.Options{Logger: log})
	t.Cleanup(func() { r.d.Close(); r.bus.Close() })
	h, err := host.NewCapsule(host.Deps{Dispatcher: r.d, Cancels: r.cancels, Scopes: r.scopes, Logger: log, Workspace: r.ws}, m, m.Dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts.Logger = log
	opts.WireLog = r.wire
	if opts.Env == nil {
		opts.Env = map[string]string{}
	}
	opts.Env[fakeServerEnv] = "1"
	e, err := New(m.MCPServers[0], m, h, opts)
	if err != nil {
		t.Fatal(err)
	}
	r.engine = e
	r.comp = capsule.NewComposite(m, 0, log, e)
	if err := r.comp.Load(context.Background()); err != nil {
		t.Fatalf("load: %v\nlogs:\n%s", err, r.logs)
	}
	t.Cleanup(func() { _ = r.comp.Unload(context.Background()) })
	s := r.comp.Surface()
	acl := dispatch.CapsuleACL{ID: m.ID(), Publish: append(m.PublishPatterns(), s.Publish...), Subscribe: append(m.SubscribePatterns(), s.Subscribe...)}
	for _, i := range append(m.Interceptors(), s.Interceptors...) {
		acl.Interceptors = append(acl.Interceptors, dispatch.Interceptor{Pattern: i.Pattern, Handler: i.Handler, Priority: i.Priority})
	}
	if err := r.d.Register(acl, r.comp); err != nil {
		t.Fatal(err)
	}
	client := dispatch.CapsuleACL{ID: clientID, Publish: []string{"tool.v1.execute.*", ipc.ToolRequestDescribeTopic, "hook.*"}, Subscribe: []string{ipc.ToolResultPattern, ipc.ToolDescribeResponsePattern}}
	if err := r.d.Register(client, nopTarget{}); err != nil {
		t.Fatal(err)
	}
	if r.results, err = r.d.Subscribe(dispatch.Caller{Capsule: clientID, Principal: ipc.DefaultPrincipal}, ipc.ToolResultPattern, false); err != nil {
		t.Fatal(err)
	}
	return r
}

type nopTarget struct{}

func (nopTarget) Intercept(context.Context, dispatch.Invocation) (dispatch.Verdict, error) {
	return dispatch.Verdict{}, dispatch.ErrNotSupported
}

// call publishes a call of a bus tool.
func (r *rig) call(tool, callID string, args string) {
	r.t.Helper()
	r.callIn(0, tool, callID, args)
}

// callIn publishes a call of a bus tool in request scope (0: none), as an
// uplink's client does.
func (r *rig) callIn(scope uint64, tool, callID string, args string) {
	r.t.Helper()
	p, err := ipc.EncodePayload(ipc.ToolExecuteRequest{CallID: callID, ToolName: tool, Arguments: json.RawMessage(args)})
	if err != nil {
		r.t.Fatal(err)
	}
	res, err := r.d.Publish(dispatch.Caller{Capsule: clientID, Principal: ipc.DefaultPrincipal, Scope: scope}, ipc.ToolExecuteTopic(tool), p)
	if err != nil {
		r.t.Fatal(err)
	}
	if res.Interceptors != 1 {
		r.t.Fatalf("call of %s reached %d interceptors, want 1", tool, res.Interceptors)
	}
}

// result waits for the next result on any tool's result topic.
func (r *rig) result() (topic, source string, res ipc.ToolExecuteResult) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	d, err := r.results.Recv(ctx)
	if err != nil {
		r.t.Fatalf("no tool result: %v\nlogs:\n%s", err, r.logs)
	}
	if err := json.Unmarshal(ipc.GuestBytes(d.Envelope.Payload), &res); err != nil {
		r.t.Fatalf("result %s: %v", d.Envelope.Payload, err)
	}
	return d.Envelope.Topic, d.Envelope.SourceID, res
}

// roundTrip calls tool and returns its result, checking where it came from.
func (r *rig) roundTrip(tool, callID, args string) ipc.ToolCallResult {
	r.t.Helper()
	return r.roundTripIn(0, tool, callID, args)
}

// roundTripIn is roundTrip in request scope (0: none).
func (r *rig) roundTripIn(scope uint64, tool, callID, args string) ipc.ToolCallResult {
	r.t.Helper()
	r.callIn(scope, tool, callID, args)
	topic, source, res := r.result()
	if topic != ipc.ToolResultTopic(tool) || source != r.comp.ID() || res.CallID != callID {
		r.t.Fatalf("result on %s from %s for %s, want %s from %s for %s", topic, source, res.CallID, ipc.ToolResultTopic(tool), r.comp.ID(), callID)
	}
	return res.Result
}

// noMoreResults checks that nothing else arrived on the result topics.
func (r *rig) noMoreResults() {
	r.t.Helper()
	if d, ok := r.results.TryRecv(); ok {
		r.t.Fatalf("unexpected extra result on %s: %s", d.Envelope.Topic, d.Envelope.Payload)
	}
}

func contains(t *testing.T, what, got, want string) {
	t.Helper()
	if !strings.Contains(got, want) {
		t.Fatalf("%s = %q, want it to contain %q", what, got, want)
	}
}

func writeFile(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}

// realTempDir is a temporary directory with its symlinks resolved, as a
// workspace the uplink took is (host.CheckWorkspace).
func realTempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}
