package sdk

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
)

// sampleHost answers a sample request with the replies reply makes of it.
type sampleHost struct {
	fakeHost
	reply   func(q ipc.AgentToolSample) []hostapi.Message
	pending []hostapi.Message
	subs    []string
}

func (h *sampleHost) Subscribe(pattern string) (hostapi.SubscriptionID, error) {
	h.subs = append(h.subs, pattern)
	return 1, nil
}
func (h *sampleHost) Unsubscribe(hostapi.SubscriptionID) error { return nil }
func (h *sampleHost) Now() time.Time                           { return time.Unix(0, 0) }
func (h *sampleHost) Publish(topic string, payload []byte) error {
	var q ipc.AgentToolSample
	if topic == ipc.AgentToolSampleTopic && json.Unmarshal(payload, &q) == nil {
		h.pending = h.reply(q)
	}
	return h.fakeHost.Publish(topic, payload)
}
func (h *sampleHost) Recv(hostapi.SubscriptionID, time.Duration) (hostapi.Message, error) {
	if len(h.pending) == 0 {
		return hostapi.Message{}, hostapi.Errorf(hostapi.CodeClosed, "recv", "no more")
	}
	m := h.pending[0]
	h.pending = h.pending[1:]
	return m, nil
}

func replyFrom(source string, r ipc.AgentToolSampleReply) hostapi.Message {
	b, _ := json.Marshal(r)
	return hostapi.Message{SourceID: source, Payload: b}
}

// TestSampleTakesOnlyTheToolCallersAnswer: a sample names its call and
// tool; answers from a capsule, or for another request, are passed over;
// the frontend's refusal is an error saying why; a request that does not
// validate is never published.
func TestSampleTakesOnlyTheToolCallersAnswer(t *testing.T) {
	var asked ipc.AgentToolSample
	h := &sampleHost{reply: func(q ipc.AgentToolSample) []hostapi.Message {
		asked = q
		return []hostapi.Message{
			replyFrom("evil-capsule", ipc.AgentToolSampleReply{RequestID: q.RequestID, Text: "forged"}),
			replyFrom(ipc.ToolCallerID, ipc.AgentToolSampleReply{RequestID: "another", Text: "not this one"}),
			replyFrom(ipc.ToolCallerID, ipc.AgentToolSampleReply{RequestID: q.RequestID, Text: "hello", Model: "m"}),
		}
	}}
	var got ipc.AgentToolSampleReply
	var gotErr error
	c := New("test")
	Tool(c, "ask", "asks", func(call *Call, _ struct{}) (string, error) {
		got, gotErr = Sample(call, ipc.AgentToolSample{Messages: []ipc.SampleMessage{{Role: "user", Text: "hi"}}, MaxTokens: 5})
		return "", nil
	})
	req, _ := ipc.ToolExecuteRequest{CallID: "call-1", ToolName: "ask", Arguments: json.RawMessage(`{}`)}.MarshalJSON()
	inv := hostapi.Invocation{Handler: "tool_execute_ask", Topic: ipc.ToolExecuteTopic("ask"), Payload: req}
	if _, err := c.Invoke(h, inv); err != nil {
		t.Fatal(err)
	}
	if gotErr != nil || got.Text != "hello" || got.Model != "m" {
		t.Fatalf("Sample = %+v, %v", got, gotErr)
	}
	if asked.CallID != "call-1" || asked.Name != "ask" || len(asked.RequestID) != 33 || h.subs[0] != ipc.AgentToolSampleReplyTopic(asked.RequestID) {
		t.Fatalf("asked %+v on %v", asked, h.subs)
	}

	h.reply = func(q ipc.AgentToolSample) []hostapi.Message {
		return []hostapi.Message{replyFrom(ipc.ToolCallerID, ipc.AgentToolSampleReply{RequestID: q.RequestID, Error: "sampling refused: config.toml [mcp] sampling does not name capsule \"test\""})}
	}
	if _, err := c.Invoke(h, inv); err != nil {
		t.Fatal(err)
	}
	if gotErr == nil || !strings.Contains(gotErr.Error(), "[mcp] sampling does not name") {
		t.Fatalf("refused: %+v, %v", got, gotErr)
	}

	h.published = nil
	Tool(c, "bad", "asks badly", func(call *Call, _ struct{}) (string, error) {
		_, gotErr = Sample(call, ipc.AgentToolSample{Messages: []ipc.SampleMessage{{Role: "system", Text: "hi"}}, MaxTokens: 5})
		return "", nil
	})
	req, _ = ipc.ToolExecuteRequest{CallID: "call-2", ToolName: "bad", Arguments: json.RawMessage(`{}`)}.MarshalJSON()
	if _, err := c.Invoke(h, hostapi.Invocation{Handler: "tool_execute_bad", Topic: ipc.ToolExecuteTopic("bad"), Payload: req}); err != nil {
		t.Fatal(err)
	}
	if gotErr == nil || !strings.Contains(gotErr.Error(), "is not user or assistant") || h.published[ipc.AgentToolSampleTopic] != nil {
		t.Fatalf("a bad request: %v, published %s", gotErr, h.published[ipc.AgentToolSampleTopic])
	}
}
