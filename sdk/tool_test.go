package sdk

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
)

type pathArgs struct {
	Path  string  `json:"file_path"`
	Limit *int    `json:"limit"`
	Note  *string `json:"note"`
}

func TestDecodeArgs(t *testing.T) {
	_, required, err := schemaOf[pathArgs]()
	if err != nil {
		t.Fatal(err)
	}
	flat := newFlatArgs(reflect.TypeFor[pathArgs]())
	if flat == nil {
		t.Fatal("no flat decoder for pathArgs")
	}
	for _, c := range []struct {
		name, in string
		want     string // the decoded path, or the error's text when wantErr
		wantErr  bool
	}{
		{"plain", `{"file_path":"a.txt"}`, "a.txt", false},
		{"escapes", `{"file_path":"a\n\"b\".txt"}`, "a\n\"b\".txt", false},
		{"a proper surrogate pair", `{"file_path":"\ud83d\ude00.txt"}`, "😀.txt", false},
		{"an escaped backslash before u", `{"file_path":"\\ud800.txt"}`, `\ud800.txt`, false},
		{"U+FFFD itself", `{"file_path":"\ufffd.txt"}`, "\ufffd.txt", false},
		{"spaces", " {\"file_path\" : \"a\"} ", "a", false},
		// Refused: each would otherwise reach the tool as "\uFFFD…",
		// another file that may exist.
		{"lone high", `{"file_path":"\ud800.txt"}`, `unpaired UTF-16 surrogate escape \ud800 at byte 14`, true},
		{"lone high, upper case", `{"file_path":"\uD800.txt"}`, `\uD800`, true},
		{"lone low", `{"file_path":"\udc00.txt"}`, `\udc00`, true},
		{"high at the end", `{"file_path":"a\udbff"}`, `\udbff`, true},
		{"low before high", `{"file_path":"\ude00\ud83d"}`, `\ude00`, true},
		{"in another argument", `{"file_path":"a","note":"\ud800"}`, `\ud800`, true},
		{"in a key", `{"file_path":"a","\udfff":1}`, `\udfff`, true},
		// What encoding/json refuses, it still refuses.
		{"missing", `{}`, `missing field "file_path"`, true},
		{"null", `null`, `missing field "file_path"`, true},
		{"not an object", `[1]`, "cannot unmarshal array", true},
		{"wrong type", `{"file_path":1}`, "cannot unmarshal number", true},
	} {
		// Through encoding/json alone, and as a tool decodes them (the
		// flat decoder first).
		for _, decode := range []func(json.RawMessage, *pathArgs) error{
			func(raw json.RawMessage, v *pathArgs) error { return decodeArgs(raw, required, v) },
			func(raw json.RawMessage, v *pathArgs) error { return decodeArgsFlat(flat, raw, required, v) },
		} {
			var got pathArgs
			err := decode(json.RawMessage(c.in), &got)
			switch {
			case c.wantErr && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("%s: %s gave %+v, %v; want an error containing %q", c.name, c.in, got, err, c.want)
			case !c.wantErr && (err != nil || got.Path != c.want):
				t.Errorf("%s: %s gave %q, %v; want %q", c.name, c.in, got.Path, err, c.want)
			}
		}
	}
}

// fakeHost records what a handler did; the methods a test does not set
// panic (the nil embedded interface), so an unexpected call fails loudly.
type fakeHost struct {
	hostapi.Host
	failureErr, cancelErr error
	published             map[string][]byte
	logs                  []string
}

func (h *fakeHost) Publish(topic string, payload []byte) error {
	if h.published == nil {
		h.published = map[string][]byte{}
	}
	h.published[topic] = payload
	return nil
}
func (h *fakeHost) SetFailureReply(string, []byte) error { return h.failureErr }
func (h *fakeHost) SetCancelKey(string) error            { return h.cancelErr }
func (h *fakeHost) Log(level hostapi.LogLevel, msg string) {
	h.logs = append(h.logs, msg)
}

// TestToolSurfacesRefusedRegistrations: a failure reply or cancel key the
// host refuses is logged with its reason (not dropped), and the call still
// runs and answers.
func TestToolSurfacesRefusedRegistrations(t *testing.T) {
	c := New("test")
	Tool(c, "echo", "echoes", func(_ *Call, a struct {
		Text string `json:"text"`
	}) (string, error) {
		return a.Text, nil
	})
	req, err := ipc.ToolExecuteRequest{CallID: "call-1", ToolName: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)}.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name                  string
		failureErr, cancelErr error
		wantLogs              []string
	}{
		{"both accepted", nil, nil, nil},
		{"failure reply refused", errors.New("topic not in [publish]"), nil, []string{"failure reply not registered: topic not in [publish]"}},
		{"cancel key refused", nil, errors.New("key taken"), []string{"cancel key not registered: key taken"}},
		{"both refused", errors.New("e1"), errors.New("e2"), []string{"failure reply not registered: e1", "cancel key not registered: e2"}},
	} {
		h := &fakeHost{failureErr: tc.failureErr, cancelErr: tc.cancelErr}
		inv := hostapi.Invocation{Handler: "tool_execute_echo", Topic: ipc.ToolExecuteTopic("echo"), Payload: req}
		if _, err := c.Invoke(h, inv); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(h.logs) != len(tc.wantLogs) {
			t.Fatalf("%s: logs %q, want %d lines", tc.name, h.logs, len(tc.wantLogs))
		}
		for i, want := range tc.wantLogs {
			if !strings.Contains(h.logs[i], want) || !strings.Contains(h.logs[i], `"call-1"`) {
				t.Errorf("%s: log %q does not name the call and say %q", tc.name, h.logs[i], want)
			}
		}
		var res ipc.ToolExecuteResult
		if err := res.UnmarshalJSON(h.published[ipc.ToolResultTopic("echo")]); err != nil || res.Result.Content != "hi" || res.Result.IsError {
			t.Errorf("%s: result %+v, %v", tc.name, res, err)
		}
	}
}

// TestAccessorsOutliveTheirCallNatively is the native half of the wasm
// engine's TestAccessorsOutliveTheirCall: what the accessors returned in
// one call is unchanged after the next.
func TestAccessorsOutliveTheirCallNatively(t *testing.T) {
	var topic, source string
	var payload []byte
	c := New("test")
	c.Handle("a.*", "keep", func(call *Call) error {
		if topic == "" {
			topic, source, payload = call.Topic(), call.SourceID(), call.Payload()
		}
		return nil
	})
	buf := []byte(`{"first":"call"}`)
	if _, err := c.Invoke(&fakeHost{}, hostapi.Invocation{Handler: "keep", Topic: "a.one", SourceID: "s1", Payload: buf}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Invoke(&fakeHost{}, hostapi.Invocation{Handler: "keep", Topic: "a.two", SourceID: "s2", Payload: []byte(`{"other":"call"}`)}); err != nil {
		t.Fatal(err)
	}
	if topic != "a.one" || source != "s1" || string(payload) != `{"first":"call"}` {
		t.Errorf("kept %q %q %s", topic, source, payload)
	}
}

// TestToolWithPartsAnswersTypedContent: a tool's parts reach the result
// beside a Content the model reads (their placeholders when the tool gave
// no text); parts the bounds refuse make the result an error saying why.
func TestToolWithPartsAnswersTypedContent(t *testing.T) {
	img := ipc.ToolPart{Type: ipc.ToolPartImage, MimeType: "image/png", Data: []byte("png")}
	c := New("test")
	ToolWithParts(c, "pic", "an image", func(_ *Call, a struct {
		Bad *bool `json:"bad"`
	}) (Result, error) {
		if a.Bad != nil && *a.Bad {
			return Result{Parts: []ipc.ToolPart{{Type: ipc.ToolPartImage, MimeType: "text/html", Data: []byte("<b>")}}}, nil
		}
		return Result{Parts: []ipc.ToolPart{img}}, nil
	})
	for _, tc := range []struct {
		args, content string
		isError       bool
		parts         int
	}{
		{`{}`, "[image image/png, 3 bytes]", false, 1},
		{`{"bad":true}`, "tool pic: its result was refused: content part 0: an image part needs an image/* MIME type", true, 0},
	} {
		req, _ := ipc.ToolExecuteRequest{CallID: "call-1", ToolName: "pic", Arguments: json.RawMessage(tc.args)}.MarshalJSON()
		h := &fakeHost{}
		if _, err := c.Invoke(h, hostapi.Invocation{Handler: "tool_execute_pic", Topic: ipc.ToolExecuteTopic("pic"), Payload: req}); err != nil {
			t.Fatal(err)
		}
		var res ipc.ToolExecuteResult
		if err := res.UnmarshalJSON(h.published[ipc.ToolResultTopic("pic")]); err != nil {
			t.Fatal(err)
		}
		r := res.Result
		if !strings.HasPrefix(r.Content, tc.content) || r.IsError != tc.isError || len(r.Parts) != tc.parts {
			t.Errorf("%s: result %+v; want content %q, error %v, %d parts", tc.args, r, tc.content, tc.isError, tc.parts)
		}
		if tc.parts == 1 && !reflect.DeepEqual(r.Parts[0], img) {
			t.Errorf("part %+v, want %+v", r.Parts[0], img)
		}
	}
}
