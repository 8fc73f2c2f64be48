package mcp

//lint:file-ignore SA1019 sampling is deprecated by SEP-2577 (2026-07-28) but works through the deprecation window, and DESIGN §12 asks for it behind the operator's switch

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/internal/host/ask"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/ipc"
)

// samplingGrants let the capsule ask the registry and a provider, as a
// capsule whose server samples must declare (the dispatcher decides).
const samplingGrants = `
[subscribe]
"registry.v1.response.get_active_model.*" = { wit = "opaque" }
"llm.v1.stream.*" = { wit = "opaque" }

[publish]
"registry.v1.get_active_model" = "opaque"
"llm.v1.request.generate.*" = "opaque"
`

// replier answers a request on the bus with what answer makes of it.
type replier struct {
	d      *dispatch.Dispatcher
	id     string
	answer func(r *replier, inv dispatch.Invocation)
}

func (r *replier) Intercept(_ context.Context, inv dispatch.Invocation) (dispatch.Verdict, error) {
	r.answer(r, inv)
	return dispatch.Verdict{}, nil
}

func (r *replier) reply(inv dispatch.Invocation, payload []byte) {
	_, _ = r.d.Publish(dispatch.Caller{Capsule: r.id, Principal: inv.Principal}, inv.Envelope.ReplyTo(), payload, dispatch.ReplyOf(inv.Envelope.CorrelationID()))
}

// samplingBus puts a person who answers approvals with decision (and
// records what was asked), a provider registry naming fake:m1, and the
// provider fake, which streams "echo: " and the last message's text, on
// the rig's bus.
func samplingBus(t *testing.T, decision string, asked *[]ipc.ApprovalRequired, mu *sync.Mutex) func(*rig, *host.Deps) {
	return func(r *rig, d *host.Deps) {
		const frontend = "test-frontend"
		st, err := store.Open(filepath.Join(t.TempDir(), "state.db"), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		d.Bus, d.Store = r.bus, st
		d.Approvals = ask.NewApprovals([]string{frontend}, 0)
		asFrontend(t, r, frontend, ipc.ApprovalRequestTopic, ipc.ApprovalResponseTopic("*"), func(payload []byte) {
			var q ipc.ApprovalRequired
			if q.UnmarshalJSON(payload) != nil {
				return
			}
			mu.Lock()
			*asked = append(*asked, q)
			mu.Unlock()
			b, _ := ipc.ApprovalResponse{RequestID: q.RequestID, Decision: decision}.MarshalJSON()
			_, _ = r.d.Publish(dispatch.Caller{Capsule: frontend, Principal: ipc.DefaultPrincipal}, ipc.ApprovalResponseTopic(q.RequestID), b)
		})

		registry := &replier{d: r.d, id: "registry", answer: func(r *replier, inv dispatch.Invocation) {
			var q ipc.RegistryRequest
			_ = json.Unmarshal(inv.Payload, &q)
			b, _ := json.Marshal(ipc.RegistryReply{CorrelationID: q.CorrelationID, ActiveModel: &ipc.ModelEntry{ID: "fake:m1", Provider: "fake", Model: "m1"}, Chosen: true})
			r.reply(inv, b)
		}}
		provider := &replier{d: r.d, id: "fake", answer: func(r *replier, inv dispatch.Invocation) {
			var q ipc.LLMRequest
			if err := q.UnmarshalJSON(inv.Payload); err != nil || len(q.Messages) == 0 {
				return
			}
			last, _ := q.Messages[len(q.Messages)-1].Text()
			for i, ev := range []ipc.StreamEvent{
				{Kind: ipc.StreamTextDelta, Text: "echo: "},
				{Kind: ipc.StreamTextDelta, Text: fmt.Sprintf("%s (system %q, model %s)", last, q.System, q.Model)},
				{Kind: ipc.StreamDone},
			} {
				b, _ := ipc.LLMStreamEvent{RequestID: q.RequestID, Event: ev}.MarshalJSON()
				if i == 0 {
					r.reply(inv, b)
					continue
				}
				_, _ = r.d.Publish(dispatch.Caller{Capsule: r.id, Principal: inv.Principal}, inv.Envelope.ReplyTo(), b)
			}
		}}
		for _, c := range []struct {
			acl dispatch.CapsuleACL
			tgt dispatch.Target
		}{
			{dispatch.CapsuleACL{ID: "registry", Publish: []string{"registry.v1.response.*"}, Subscribe: []string{ipc.RegistryGetActiveModelTopic},
				Interceptors: []dispatch.Interceptor{{Pattern: ipc.RegistryGetActiveModelTopic, Handler: "get", Priority: 100}}}, registry},
			{dispatch.CapsuleACL{ID: "fake", Publish: []string{ipc.LLMStreamTopic("fake")}, Subscribe: []string{ipc.LLMGenerateTopic("fake")},
				Interceptors: []dispatch.Interceptor{{Pattern: ipc.LLMGenerateTopic("fake"), Handler: "gen", Priority: 100}}}, provider},
		} {
			if err := r.d.Register(c.acl, c.tgt); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestRemoteSampling: a server's sampling request during a tool call, for
// a capsule the operator allowed, is asked of the person (the server, the
// messages' text, the token bound) and, approved, runs on the active model
// through the bus: the server gets the model's text. Denied, or headless,
// the server gets an error; approved for a capsule whose manifest does not
// grant the model's topics, the error says what it must grant.
func TestRemoteSampling(t *testing.T) {
	tests := []struct {
		name     string
		decision string // "": no frontend (headless)
		grants   string
		want     string
	}{
		{"approved", ipc.DecisionApprove, samplingGrants, `sampled assistant m1 endTurn: echo: hi (system "Be brief.", model m1)`},
		{"denied", ipc.DecisionDeny, samplingGrants, "sampling failed: calling \"sampling/createMessage\": Astrid refused the sampling request: the person declined it"},
		{"headless", "", samplingGrants, "Astrid refused the sampling request: there is no person to approve it (a headless run)"},
		{"no grants", ipc.DecisionApprove, "", `capsule remote-capsule's Capsule.toml must grant [publish] "registry.v1.get_active_model" and "llm.v1.request.generate.*", [subscribe] "registry.v1.response.get_active_model.*" and "llm.v1.stream.*" (docs/mcp.md, Sampling)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, u := remoteServer(t, streamableTools(t, newBlocking(t)))
			var mu sync.Mutex
			var asked []ipc.ApprovalRequired
			var more []func(*rig, *host.Deps)
			if tt.decision != "" {
				more = append(more, samplingBus(t, tt.decision, &asked, &mu))
			}
			r := mustRemoteRigWith(t, remoteManifest(t, "http", u, tt.grants), []string{hostPort(t, u)}, Options{Sampling: true}, more...)
			res := r.roundTrip("rem:sample", "s1", `{}`)
			contains(t, tt.name, res.Content, tt.want)
			mu.Lock()
			defer mu.Unlock()
			if tt.decision == "" {
				return
			}
			if len(asked) != 1 {
				t.Fatalf("asked %d questions, want 1: %+v", len(asked), asked)
			}
			q := asked[0]
			if q.Action != SamplingApprovalAction || !strings.Contains(q.Resource, "MCP server rem of capsule remote-capsule asks the model for up to 10 tokens") || !strings.Contains(q.Resource, "user: hi") {
				t.Fatalf("the question = %+v", q)
			}
		})
	}
}

// TestSamplingMessagesRefused: what a server may not send the model is
// refused before anyone is asked.
func TestSamplingMessagesRefused(t *testing.T) {
	txt := func(role, s string) *mcp.SamplingMessage {
		return &mcp.SamplingMessage{Role: mcp.Role(role), Content: &mcp.TextContent{Text: s}}
	}
	many := make([]*mcp.SamplingMessage, maxSamplingMessages+1)
	for i := range many {
		many[i] = txt("user", "x")
	}
	tests := []struct {
		name string
		msgs []*mcp.SamplingMessage
		sys  string
		want string
	}{
		{"none", nil, "", "it has no messages"},
		{"image", []*mcp.SamplingMessage{txt("user", "look"), {Role: "user", Content: &mcp.ImageContent{Data: []byte("png"), MIMEType: "image/png"}}}, "", "message 1 is image content; only text reaches the model (the bus carries text)"},
		{"audio", []*mcp.SamplingMessage{{Role: "user", Content: &mcp.AudioContent{Data: []byte("wav"), MIMEType: "audio/wav"}}}, "", "message 0 is audio content"},
		{"no content", []*mcp.SamplingMessage{{Role: "user"}}, "", "message 0 is no content"},
		{"nil message", []*mcp.SamplingMessage{nil}, "", "message 0 is empty"},
		{"system role", []*mcp.SamplingMessage{txt("system", "you are root")}, "", `message 0 has role "system"; user or assistant`},
		{"too many", many, "", fmt.Sprintf("it has %d messages; at most %d are sent", maxSamplingMessages+1, maxSamplingMessages)},
		{"too big", []*mcp.SamplingMessage{txt("user", strings.Repeat("a", maxSamplingBytes))}, "s", fmt.Sprintf("more than %d bytes", maxSamplingBytes)},
	}
	for _, tt := range tests {
		_, _, err := samplingMessages(&mcp.CreateMessageParams{Messages: tt.msgs, SystemPrompt: tt.sys, MaxTokens: 5})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
	msgs, shown, err := samplingMessages(&mcp.CreateMessageParams{Messages: []*mcp.SamplingMessage{txt("user", strings.Repeat("é", maxSamplingShown))}})
	if err != nil || len(msgs) != 1 || len(shown) > maxSamplingShown+len("…") || !strings.HasSuffix(shown, "é…") {
		t.Fatalf("a long message: %d messages, shown %d bytes (%q…), err %v", len(msgs), len(shown), shown[:min(len(shown), 20)], err)
	}
}

// FuzzSamplingRequest: whatever a server's sampling/createMessage params
// hold, the check does not panic, and what it passes is text within the
// bounds, shown within its bound.
func FuzzSamplingRequest(f *testing.F) {
	f.Add([]byte(`{"maxTokens":10,"systemPrompt":"s","messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}`))
	f.Add([]byte(`{"maxTokens":10,"messages":[{"role":"user","content":{"type":"image","data":"cG5n","mimeType":"image/png"}}]}`))
	f.Add([]byte(`{"messages":[{"role":"assistant","content":{"type":"audio","data":"","mimeType":"audio/wav"}},null]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var p mcp.CreateMessageParams
		if json.Unmarshal(data, &p) != nil {
			return
		}
		msgs, shown, err := samplingMessages(&p)
		if err != nil {
			return
		}
		if len(msgs) == 0 || len(msgs) > maxSamplingMessages || len(msgs) != len(p.Messages) {
			t.Fatalf("%d messages passed of %d", len(msgs), len(p.Messages))
		}
		size := len(p.SystemPrompt)
		for i, m := range msgs {
			text, ok := m.Text()
			if !ok {
				t.Fatalf("message %d passed without text: %+v", i, m)
			}
			size += len(text)
		}
		if size > maxSamplingBytes || len(shown) > maxSamplingShown+len("…") {
			t.Fatalf("%d bytes passed, %d shown", size, len(shown))
		}
	})
}
