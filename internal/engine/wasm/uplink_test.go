package wasm

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

// A third-party uplink written in Go and built to wasm (testdata/
// linebridge, its service run as the capsule's run loop) bridges a line
// protocol on TCP to the agent: a client's line becomes user.v1.prompt for
// the principal it names, the approval question a tool asks reaches the
// client, the client's answer is taken (the bridge holds the uplink grant)
// and the agent's answer comes back on the line. A principal the operator
// did not map the bridge to is refused, naming the config key.
func TestAWasmUplinkBridgesALineProtocol(t *testing.T) {
	logs := &syncBuffer{}
	h, _ := newHarness(t, logs)
	h.deps.UplinkActsFor = func(capsule, principal string) bool { return capsule == "linebridge" && principal == "alice" }
	h.deps.Grants = func(id string) (manifest.Capabilities, bool) {
		return manifest.Capabilities{Uplink: id == "linebridge"}, id == "linebridge"
	}

	// The agent, played here: it hears prompts, has a tool ask the
	// person before writing, and answers with what was decided.
	if err := h.d.Register(dispatch.CapsuleACL{ID: "agent", Publish: []string{ipc.AgentResponseTopic},
		Subscribe: []string{ipc.UserPromptTopic, "linebridge.v1.listening"}}, nopTarget{}); err != nil {
		t.Fatal(err)
	}
	listening, err := h.d.Subscribe(dispatch.Caller{Capsule: "agent"}, "linebridge.v1.listening", false)
	if err != nil {
		t.Fatal(err)
	}
	defer listening.Close()
	prompts, err := h.d.Subscribe(dispatch.Caller{Capsule: "agent"}, ipc.UserPromptTopic, false)
	if err != nil {
		t.Fatal(err)
	}
	defer prompts.Close()
	tool, err := host.NewCapsule(h.deps, &manifest.Manifest{Package: manifest.Package{Name: "writer", Version: "0.1.0"}}, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tool.Close()
	agentDone := make(chan error, 1)
	go func() {
		d, err := prompts.Recv(context.Background())
		if err != nil {
			agentDone <- err
			return
		}
		var in ipc.UserInput
		_ = json.Unmarshal(ipc.GuestBytes(d.Envelope.Payload), &in)
		call, _ := tool.Begin(context.Background(), d.Envelope.Principal)
		ok, err := call.RequestApproval("write_file", "notes.txt")
		call.End()
		text := "not written"
		if ok && err == nil {
			text = "wrote notes.txt for " + d.Envelope.Principal + ": " + in.Text
		}
		out, _ := json.Marshal(ipc.AgentResponse{Text: text, IsFinal: true, SessionID: in.SessionID})
		_, err = h.d.Publish(dispatch.Caller{Capsule: "agent", Principal: d.Envelope.Principal}, ipc.AgentResponseTopic, out)
		agentDone <- err
	}()

	data, err := os.ReadFile("testdata/linebridge/Capsule.toml")
	if err != nil {
		t.Fatal(err)
	}
	m, diags := manifest.Parse(data, "Capsule.toml", "")
	if err := diags.Err(false); err != nil {
		t.Fatal(err)
	}
	m = withComponent(m, guest(t, "testdata/linebridge"))
	if _, err := h.load(t, newRuntime(t, Options{Logger: h.log}), m, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	d, err := listening.Recv(ctxFor(t, time.Minute))
	if err != nil {
		t.Fatalf("the bridge never said where it listens: %v\n%s", err, logs.String())
	}
	var where struct{ Addr string }
	if err := json.Unmarshal(ipc.GuestBytes(d.Envelope.Payload), &where); err != nil || where.Addr == "" {
		t.Fatalf("listening on %s: %v", d.Envelope.Payload, err)
	}

	conn, err := net.Dial("tcp", where.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	readLine := func(what string) string {
		t.Helper()
		_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("waiting for %s: %v (read %q)\n%s", what, err, line, logs.String())
		}
		return strings.TrimSpace(line)
	}
	send := func(s string) {
		t.Helper()
		if _, err := conn.Write([]byte(s + "\n")); err != nil {
			t.Fatal(err)
		}
	}

	send("bob hello")
	if got := readLine("bob's refusal"); !strings.HasPrefix(got, "error: ") || !strings.Contains(got, `acts_for = ["linebridge=bob"]`) {
		t.Fatalf("a principal the bridge was not mapped to: %q, want a refusal naming [uplink] acts_for", got)
	}
	send("alice keep a note")
	if got := readLine("the approval question"); got != "approve? write_file notes.txt" {
		t.Fatalf("question %q", got)
	}
	send("y")
	if got := readLine("the answer"); got != "answer: wrote notes.txt for alice: keep a note" {
		t.Fatalf("answer %q", got)
	}
	if err := testutil.WaitForRecv(t, time.Minute, "the agent to finish", agentDone); err != nil {
		t.Fatal(err)
	}
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
