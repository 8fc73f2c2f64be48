package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/astrid-go/astrid/capsules/approval"
	"github.com/astrid-go/astrid/capsules/promptbuilder"
	"github.com/astrid-go/astrid/internal/bus/natsbus"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// toolsFixture is a capsule id serving tools named by tools (each answers
// "<tool> served by <host>"); the names in mutable are marked mutable.
func toolsFixture(id, host string, tools []string, mutable ...string) Builtin {
	var b strings.Builder
	fmt.Fprintf(&b, "[package]\nname = %q\nversion = \"0.1.0\"\n[subscribe]\n", id)
	for _, name := range tools {
		fmt.Fprintf(&b, "%q = { wit = \"opaque\", handler = \"tool_execute_%s\" }\n", ipc.ToolExecuteTopic(name), name)
	}
	fmt.Fprintf(&b, "%q = { wit = \"opaque\", handler = %q }\n", ipc.ToolRequestDescribeTopic, sdk.DescribeHandler)
	b.WriteString("[publish]\n")
	fmt.Fprintf(&b, "%q = \"opaque\"\n", ipc.ToolDescribeResponseTopic(id))
	for _, name := range tools {
		fmt.Fprintf(&b, "%q = \"opaque\"\n", ipc.ToolExecuteTopic(name)+".result")
	}
	return Builtin{Manifest: []byte(b.String()), New: func() *sdk.Capsule {
		c := sdk.New("test fixture: tools of " + host)
		for _, name := range tools {
			var opts []sdk.ToolOption
			if slices.Contains(mutable, name) {
				opts = append(opts, sdk.Mutable())
			}
			sdk.Tool(c, name, name+" (a test tool)", func(*sdk.Call, struct{}) (string, error) {
				return name + " served by " + host, nil
			}, opts...)
		}
		return c
	}}
}

// promptClient is the frontend that asks host A's prompt builder for a
// model request's tools.
const promptClient = "test-prompt-client"

// remoteToolsMesh boots two kernels on one loopback cluster. Host A runs
// the router, the approval layer and the prompt builder, with the capsule
// "both-tools" (tool both_here, read-only) and "twin-a" (tool twin). Host B
// serves "remote-tools" (remote_read, read-only; remote_write, mutable),
// the same "both-tools", and "twin-b", another capsule with a tool twin.
// It returns once each host hears the other's tools.
func remoteToolsMesh(t *testing.T) *Kernel {
	t.Helper()
	pa, pb := freePort(t), freePort(t)
	secret := testClusterSecret(t)
	cfg := config.Default()
	cfg.NATS = meshNode("hostA", pa, pa, secret)
	a, err := Boot(context.Background(), Options{
		Home: t.TempDir(), Workspace: t.TempDir(), Config: cfg, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
		Builtins: []Builtin{routerBuiltin(), {Manifest: approval.Manifest, New: approval.New},
			{Manifest: promptbuilder.Manifest, New: promptbuilder.New},
			toolsFixture("both-tools", "hostA", []string{"both_here"}), toolsFixture("twin-a", "hostA", []string{"twin"})},
		Frontends: append(testFrontends(), dispatch.CapsuleACL{ID: promptClient,
			Publish: []string{promptbuilder.AssembleTopic}, Subscribe: []string{"prompt_builder.v1.response.*"}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	b := bootToolHost(t, meshNode("hostB", pb, pa, secret),
		toolsFixture("remote-tools", "hostB", []string{"remote_read", "remote_write"}, "remote_write"),
		toolsFixture("both-tools", "hostB", []string{"both_here"}), toolsFixture("twin-b", "hostB", []string{"twin"}))
	// B must also have heard that A serves both-tools: a capsule loaded on
	// the publishing host runs there only, which B can tell once it knows.
	testutil.WaitFor(t, testTimeout, "hosts A and B to hear each other's tools", func() bool {
		return slices.Contains(b.Dispatcher.Interceptors(ipc.ToolRequestDescribeTopic), "twin-a") &&
			slices.ContainsFunc(b.NATSTransport().Hosts(), func(h natsbus.HostInfo) bool {
				return h.ID == "hostA" && slices.Contains(h.Capsules, "both-tools")
			}) &&
			slices.Contains(a.Dispatcher.Interceptors(ipc.ToolRequestDescribeTopic), "remote-tools") &&
			slices.Contains(a.Dispatcher.Interceptors(ipc.ToolRequestDescribeTopic), "twin-b") &&
			slices.Contains(a.Dispatcher.ExactInterceptors(ipc.ToolExecuteTopic("remote_write")), "remote-tools")
	})
	return a
}

// Issue 31 item 3: remote tools are tools. A tool only host B serves is
// listed on host A with B's id, offered to the model by A's prompt builder,
// and A's approval layer takes its mutable flag from B's description: the
// mutable one is asked about, the read-only one is not. A tool on both
// hosts (one capsule on each, or two capsules of one tool name) is listed
// and offered once, as host A's own.
func TestRemoteToolsAreListedOfferedAndApproved(t *testing.T) {
	a := remoteToolsMesh(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()

	t.Run("listed", func(t *testing.T) {
		tools, missing, err := toolclient.ListTools(ctx, a.Frontend(), ipc.DefaultPrincipal, testTimeout)
		if err != nil || len(missing) != 0 {
			t.Fatalf("list: %v, missing %v", err, missing)
		}
		want := map[string]toolclient.ToolInfo{
			"remote_read":  {Capsule: "remote-tools", Host: "hostB"},
			"remote_write": {Capsule: "remote-tools", Host: "hostB", Mutable: true},
			"both_here":    {Capsule: "both-tools"},
			"twin":         {Capsule: "twin-a"},
		}
		count := map[string]int{}
		for _, tl := range tools {
			count[tl.Name]++
			w, ok := want[tl.Name]
			if !ok {
				continue
			}
			if tl.Capsule != w.Capsule || tl.Host != w.Host || tl.Mutable != w.Mutable {
				t.Errorf("%s listed as %+v, want capsule %s host %q mutable %v", tl.Name, tl, w.Capsule, w.Host, w.Mutable)
			}
		}
		for name := range want {
			if count[name] != 1 {
				t.Errorf("%s listed %d times, want once (%+v)", name, count[name], tools)
			}
		}
	})

	t.Run("offered", func(t *testing.T) {
		caller := dispatch.Caller{Capsule: promptClient, Principal: ipc.DefaultPrincipal}
		sub, err := a.Dispatcher.Subscribe(caller, promptbuilder.ResponseTopic, true)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		req, _ := json.Marshal(map[string]any{"request_id": "r1", "messages": []ipc.Message{ipc.TextMessage(ipc.RoleUser, "hi")}})
		if _, err := a.Dispatcher.Publish(caller, promptbuilder.AssembleTopic, req); err != nil {
			t.Fatal(err)
		}
		d, err := sub.Recv(ctx)
		if err != nil {
			t.Fatalf("no answer from the prompt builder: %v", err)
		}
		var r promptbuilder.Response
		if err := json.Unmarshal(ipc.GuestBytes(d.Envelope.Payload), &r); err != nil {
			t.Fatal(err)
		}
		count := map[string]int{}
		for _, tl := range r.Tools {
			count[tl.Name]++
		}
		for _, name := range []string{"remote_read", "remote_write", "both_here", "twin"} {
			if count[name] != 1 {
				t.Errorf("the model is offered %s %d times, want once (%v)", name, count[name], count)
			}
		}
	})

	t.Run("approved", func(t *testing.T) {
		var mu sync.Mutex
		var asked []ipc.ApprovalRequired
		approve := func(_ context.Context, q ipc.ApprovalRequired) string {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, q)
			return ipc.DecisionApprove
		}
		for _, tc := range []struct {
			tool  string
			asked bool
		}{{"remote_read", false}, {"remote_write", true}, {"both_here", false}} {
			mu.Lock()
			asked = nil
			mu.Unlock()
			res, err := toolclient.CallToolApproving(ctx, a.Frontend(), ipc.DefaultPrincipal, tc.tool, nil, testTimeout, approve)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.tool + " served by hostB"
			if tc.tool == "both_here" {
				want = tc.tool + " served by hostA"
			}
			if res.IsError || res.Content != want {
				t.Fatalf("%s: result %+v, want %q", tc.tool, res, want)
			}
			mu.Lock()
			got := slices.Clone(asked)
			mu.Unlock()
			switch {
			case !tc.asked && len(got) != 0:
				t.Errorf("%s (read-only on host B) was asked about: %+v", tc.tool, got)
			case tc.asked && len(got) != 1:
				t.Errorf("%s (mutable on host B): %d questions, want 1", tc.tool, len(got))
			case tc.asked && !strings.Contains(got[0].Reason, "marked as changing things (mutable)"):
				t.Errorf("%s: the question does not take the flag from the tool's description: %q", tc.tool, got[0].Reason)
			}
		}
	})
}
