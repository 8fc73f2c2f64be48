package ipc

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestRequestFieldsCrossTheJSONForm(t *testing.T) {
	e := &Envelope{Topic: "a.b", Payload: json.RawMessage(`{}`), SourceID: "c"}
	e.SetRequest("a.reply", "call-1", time.Unix(10, 5).UnixNano())
	data, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"reply_to":"a.reply"`, `"correlation_id":"call-1"`, `"deadline":"1970-01-01T00:00:10.000000005Z"`} {
		if !strings.Contains(string(data), want) {
			t.Fatalf("%s lacks %s", data, want)
		}
	}
	var got Envelope
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if !got.IsRequest() || got.IsReply() || got.ReplyTo() != "a.reply" || got.CorrelationID() != "call-1" || got.Deadline() != e.Deadline() {
		t.Fatalf("request lost in JSON: %+v", got.Provenance)
	}
	r := &Envelope{Topic: "a.reply", Payload: json.RawMessage(`{}`)}
	r.SetReply("call-1")
	data, _ = json.Marshal(r)
	var back Envelope
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !back.IsReply() || back.IsRequest() || back.CorrelationID() != "call-1" || strings.Contains(string(data), "reply_to") {
		t.Fatalf("reply lost in JSON: %s", data)
	}
}

func TestAnEnvelopeWithoutARequestEncodesAsBefore(t *testing.T) {
	e := &Envelope{Topic: "a.b", Payload: json.RawMessage(`{}`), SourceID: "c"}
	data, _ := json.Marshal(e)
	for _, no := range []string{"reply_to", "correlation_id", "deadline"} {
		if strings.Contains(string(data), no) {
			t.Fatalf("%s names %s", data, no)
		}
	}
	if e.IsRequest() || e.IsReply() || e.ReplyTo() != "" || e.CorrelationID() != "" {
		t.Fatal("a plain envelope reads as a request or reply")
	}
}

func TestRequestFailedRoundTrip(t *testing.T) {
	f := RequestFailed{CorrelationID: "c-1", Reason: FailQueueFull, Message: "its queue was full"}
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), `{"type":"request_failed"`) {
		t.Fatalf("untagged: %s", data)
	}
	got, ok := AsRequestFailed(data)
	if !ok || got != f {
		t.Fatalf("AsRequestFailed(%s) = %+v, %v", data, got, ok)
	}
	if _, ok := DecodePayload(data).(Custom); !ok {
		t.Fatalf("DecodePayload of a failure is %T, want Custom (not one of upstream's variants)", DecodePayload(data))
	}
	for _, not := range []string{``, `{}`, `{"type":"tool_execute_result"}`, `{"type":"request_failed"`, `{"type":"request_failed","reason":7}`, `["request_failed"]`} {
		if _, ok := AsRequestFailed([]byte(not)); ok {
			t.Errorf("AsRequestFailed(%q) took it", not)
		}
	}
}

func TestValidateCorrelationID(t *testing.T) {
	for _, ok := range []string{"a", "call_01HX", strings.Repeat("x", MaxCorrelationID), "ünï"} {
		if err := ValidateCorrelationID(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", strings.Repeat("x", MaxCorrelationID+1), "a\nb", "a\x00", "\xff"} {
		if err := ValidateCorrelationID(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestAFailureReadsAsTheConventionsError(t *testing.T) {
	data, _ := json.Marshal(RequestFailed{CorrelationID: "call-9", Reason: FailQueueFull, Message: "capsule fs is busy"})
	var res ToolExecuteResult
	if err := res.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	if res.CallID != "call-9" || res.Result.CallID != "call-9" || !res.Result.IsError || !strings.Contains(res.Result.Content, "capsule fs is busy") || !strings.Contains(res.Result.Content, "nothing ran") {
		t.Fatalf("tool result %+v", res)
	}
	var ev LLMStreamEvent
	if err := ev.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	if ev.RequestID != "call-9" || ev.Event.Kind != StreamError || !strings.Contains(ev.Event.Text, "capsule fs is busy") {
		t.Fatalf("stream event %+v", ev)
	}
	for reason, want := range map[FailureReason]string{FailHandler: "failed", FailRefused: "refused", FailTimeout: "in time", FailHostLost: "may have acted", FailReplyLost: "was lost", FailUnloaded: "nothing ran"} {
		if got := FailureText(RequestFailed{Reason: reason, Message: "m"}, "x"); !strings.Contains(got, want) {
			t.Errorf("%s: %q lacks %q", reason, got, want)
		}
	}
}
