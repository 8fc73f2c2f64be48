package replay_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/capsules/fs"
	"github.com/astrid-go/astrid/capsules/replay"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

const script = `{"match": {"user": "weather"}}
{"TextDelta": "Sunny."}
"Done"

{"match": {"user": "hello"}}
{"ReasoningDelta": "a greeting"}
{"TextDelta": "Hi"}
{"TextDelta": " there"}
{"Usage": {"input_tokens": 3, "output_tokens": 2}}
"Done"
{"match": {"tool_results": ["c1", "c2"]}}
{"TextDelta": "Both files read."}
"Done"
{"match": {"tool_results": ["c3"]}}
{"Error": "scripted failure"}
`

// boot loads the replay provider playing the script file named name, with
// body written into the workspace.
func boot(t *testing.T, name, body string) *sdktest.Kernel {
	t.Helper()
	k := sdktest.New(t, sdktest.Capsule{Manifest: replay.Manifest, New: replay.New, Config: map[string]string{"script": name}})
	if err := os.WriteFile(filepath.Join(k.Workspace, name), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return k
}

func userRequest(id, text string) ipc.LLMRequest {
	return ipc.LLMRequest{RequestID: id, Model: "replay", Messages: []ipc.Message{
		ipc.TextMessage(ipc.RoleUser, "an earlier question about the weather"),
		ipc.TextMessage(ipc.RoleAssistant, "an earlier answer"),
		ipc.TextMessage(ipc.RoleUser, text),
	}}
}

func toolResult(callID, content string) ipc.Message {
	return ipc.Message{Role: ipc.RoleTool, Content: ipc.MessageContent{
		Kind: ipc.ContentToolResult, ToolResult: ipc.ToolCallSuccess(callID, content)}}
}

func mustParse(t *testing.T, name, body string) *replay.Script {
	t.Helper()
	s, err := replay.Parse(name, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRegistrationsMatchManifest(t *testing.T) {
	sdktest.CheckRegistrations(t, replay.Manifest, replay.New())
}

// The last user message picks the turn (not an earlier one that would
// match another), and exactly that turn's events arrive, in order.
func TestUserMessagePlaysItsTurn(t *testing.T) {
	k := boot(t, "script.jsonl", script)
	got := k.Generate(replay.Provider, userRequest("req-1", "well, hello!"))
	want := mustParse(t, "script.jsonl", script).Turns[1].Events
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events:\n got %+v\nwant %+v", got, want)
	}
	if len(got) != 5 || got[1].Text != "Hi" || got[4].Kind != ipc.StreamDone {
		t.Fatalf("not the hello turn: %+v", got)
	}
}

// A request ending in tool results gets the turn awaiting exactly those
// call ids, whatever their order.
func TestToolResultsPlayTheFollowUpTurn(t *testing.T) {
	k := boot(t, "script.jsonl", script)
	req := userRequest("req-2", "hello, read two files")
	req.Messages = append(req.Messages,
		ipc.Message{Role: ipc.RoleAssistant, Content: ipc.MessageContent{Kind: ipc.ContentToolCalls, ToolCalls: []ipc.ToolCall{
			{ID: "c1", Name: "read_file"}, {ID: "c2", Name: "read_file"}}}},
		toolResult("c2", "second"), toolResult("c1", "first"))
	got := k.Generate(replay.Provider, req)
	want := []ipc.StreamEvent{{Kind: ipc.StreamTextDelta, Text: "Both files read."}, {Kind: ipc.StreamDone}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events: got %+v, want %+v", got, want)
	}

	// Only one of the awaited results: no turn waits for that set.
	req.Messages = req.Messages[:len(req.Messages)-1]
	req.RequestID = "req-3"
	got = k.Generate(replay.Provider, req)
	if len(got) != 1 || got[0].Kind != ipc.StreamError || !strings.Contains(got[0].Text, `tool results for ["c2"]`) {
		t.Fatalf("a partial set of results was answered: %+v", got)
	}
}

func TestScriptedErrorEndsTheStream(t *testing.T) {
	k := boot(t, "script.jsonl", script)
	req := ipc.LLMRequest{RequestID: "req-4", Messages: []ipc.Message{toolResult("c3", "x")}}
	got := k.Generate(replay.Provider, req)
	if len(got) != 1 || got[0] != (ipc.StreamEvent{Kind: ipc.StreamError, Text: "scripted failure"}) {
		t.Fatalf("events: %+v", got)
	}
}

// A request no turn matches ends in one Error saying so, never silence.
func TestUnmatchedRequestEndsInError(t *testing.T) {
	k := boot(t, "script.jsonl", script)
	for _, req := range []ipc.LLMRequest{
		userRequest("req-5", "goodbye"),
		{RequestID: "req-6"},
		{RequestID: "req-7", Messages: []ipc.Message{ipc.TextMessage(ipc.RoleAssistant, "hello")}},
	} {
		got := k.Generate(replay.Provider, req)
		if len(got) != 1 || got[0].Kind != ipc.StreamError || !strings.Contains(got[0].Text, "no turn of script.jsonl matches") {
			t.Errorf("%s: events %+v", req.RequestID, got)
		}
	}
}

// A script that does not parse answers every request with an Error naming
// file:line; so does a script that cannot be read.
func TestMalformedScriptIsRefusedWithFileAndLine(t *testing.T) {
	k := boot(t, "bad.jsonl", "{\"match\": {\"user\": \"\"}}\n{\"TextDelta\": \"ok\"}\n{\"TextDelta\": 5}\n\"Done\"\n")
	got := k.Generate(replay.Provider, userRequest("req-8", "hello"))
	if len(got) != 1 || got[0].Kind != ipc.StreamError || !strings.Contains(got[0].Text, "bad.jsonl:3:") {
		t.Fatalf("events: %+v", got)
	}

	k = sdktest.New(t, sdktest.Capsule{Manifest: replay.Manifest, New: replay.New, Config: map[string]string{"script": "missing.jsonl"}})
	got = k.Generate(replay.Provider, userRequest("req-9", "hello"))
	if len(got) != 1 || got[0].Kind != ipc.StreamError || !strings.Contains(got[0].Text, "missing.jsonl") {
		t.Fatalf("events: %+v", got)
	}
}

func TestParseRefusesMalformedScripts(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"event before match", "{\"TextDelta\": \"x\"}\n", "s.jsonl:1: a stream event before the first"},
		{"not json", "{\"match\": {\"user\": \"a\"}}\n\n{oops\n\"Done\"\n", "s.jsonl:3: not a match line or a stream event"},
		{"unknown event", "{\"match\": {\"user\": \"a\"}}\n{\"Shout\": \"x\"}\n\"Done\"\n", "s.jsonl:2:"},
		{"no end", "{\"match\": {\"user\": \"a\"}}\n{\"TextDelta\": \"x\"}\n{\"match\": {\"user\": \"b\"}}\n\"Done\"\n", "s.jsonl:1: the turn does not end with"},
		{"no end at eof", "{\"match\": {\"user\": \"a\"}}\n\"Done\"\n{\"match\": {\"user\": \"b\"}}\n", "s.jsonl:3: the turn does not end with"},
		{"event after done", "{\"match\": {\"user\": \"a\"}}\n\"Done\"\n{\"TextDelta\": \"x\"}\n", "s.jsonl:3: an event after the turn's Done"},
		{"both matches", "{\"match\": {\"user\": \"a\", \"tool_results\": [\"c\"]}}\n\"Done\"\n", "s.jsonl:1: match line: give \"user\" or \"tool_results\", not both"},
		{"empty match", "{\"match\": {}}\n\"Done\"\n", "s.jsonl:1: match line: give"},
		{"unknown match key", "{\"match\": {\"assistant\": \"a\"}}\n\"Done\"\n", "s.jsonl:1: match line:"},
		{"match not an object", "{\"match\": 5}\n\"Done\"\n", "s.jsonl:1: match line:"},
		{"no turns", "\n\n", "s.jsonl: the script has no turns"},
	} {
		_, err := replay.Parse("s.jsonl", []byte(tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

// The embedded demo parses, asks for README.md with read_file, which the
// fs capsule serves, and answers once that result is back.
func TestDemoReadsAFileAndAnswers(t *testing.T) {
	if _, err := replay.Parse(replay.DemoName, replay.Demo); err != nil {
		t.Fatal(err)
	}
	k := sdktest.New(t,
		sdktest.Capsule{Manifest: replay.Manifest, New: replay.New},
		sdktest.Capsule{Manifest: fs.Manifest, New: fs.New})
	if err := os.WriteFile(filepath.Join(k.Workspace, "README.md"), []byte("# A project\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	first := k.Generate(replay.Provider, userRequest("demo-1", "What is in this workspace?"))
	var call ipc.ToolCall
	var args strings.Builder
	for _, ev := range first {
		switch ev.Kind {
		case ipc.StreamToolCallStart:
			call = ipc.ToolCall{ID: ev.ID, Name: ev.Name}
		case ipc.StreamToolCallDelta:
			if ev.ID != call.ID {
				t.Fatalf("delta for %q inside call %q", ev.ID, call.ID)
			}
			args.WriteString(ev.ArgsDelta)
		}
	}
	if call.Name != "read_file" || first[len(first)-1].Kind != ipc.StreamDone {
		t.Fatalf("the demo's first turn does not call read_file: %+v", first)
	}
	call.Arguments = json.RawMessage(args.String())
	res := k.CallTool(call.Name, call.Arguments)
	if res.IsError || !strings.Contains(res.Content, "# A project") {
		t.Fatalf("read_file with the demo's arguments %s: %+v", args.String(), res)
	}

	req := userRequest("demo-2", "What is in this workspace?")
	req.Messages = append(req.Messages,
		ipc.Message{Role: ipc.RoleAssistant, Content: ipc.MessageContent{Kind: ipc.ContentToolCalls, ToolCalls: []ipc.ToolCall{call}}},
		toolResult(call.ID, res.Content))
	answer := k.Generate(replay.Provider, req)
	if len(answer) < 2 || answer[0].Kind != ipc.StreamTextDelta || !strings.Contains(answer[0].Text, "README.md") || answer[len(answer)-1].Kind != ipc.StreamDone {
		t.Fatalf("the demo's answer turn: %+v", answer)
	}
}

// The provider describes itself on the §6.1 contract: one entry, whose
// topics are the ones it serves.
func TestDescribeListsTheProvider(t *testing.T) {
	k := sdktest.New(t, sdktest.Capsule{Manifest: replay.Manifest, New: replay.New})
	var got struct {
		Providers []struct {
			ID            string   `json:"id"`
			Capabilities  []string `json:"capabilities"`
			RequestTopic  string   `json:"request_topic"`
			StreamTopic   string   `json:"stream_topic"`
			ContextWindow uint64   `json:"context_window"`
		} `json:"providers"`
	}
	raw := k.DescribeLLM()
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	if len(got.Providers) != 1 {
		t.Fatalf("providers: %s", raw)
	}
	p := got.Providers[0]
	if p.ID != replay.Provider || p.RequestTopic != "llm.v1.request.generate.replay" || p.StreamTopic != "llm.v1.stream.replay" ||
		!slices.Contains(p.Capabilities, "tools") || p.ContextWindow == 0 {
		t.Fatalf("entry: %s", raw)
	}
}

// With [env] context_window set the provider stands in for a server that
// enforces a context limit: describe reports the window, a request whose
// body is over it (four bytes a token) is refused with OpenAI's wording,
// and one within it is played. A window that is no whole number of tokens
// is refused by name.
func TestContextWindowIsReportedAndEnforced(t *testing.T) {
	k := sdktest.New(t, sdktest.Capsule{Manifest: replay.Manifest, New: replay.New, Config: map[string]string{"script": "script.jsonl", "context_window": "1000"}})
	if err := os.WriteFile(filepath.Join(k.Workspace, "script.jsonl"), []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	var d struct {
		Providers []struct {
			ContextWindow uint64 `json:"context_window"`
		} `json:"providers"`
	}
	if err := json.Unmarshal(k.DescribeLLM(), &d); err != nil || len(d.Providers) != 1 || d.Providers[0].ContextWindow != 1000 {
		t.Fatalf("describe: %+v (%v)", d, err)
	}
	if got := k.Generate(replay.Provider, userRequest("w-1", "hello")); got[len(got)-1].Kind != ipc.StreamDone {
		t.Fatalf("a small request was not played: %+v", got)
	}
	big := userRequest("w-2", "hello"+strings.Repeat(" and more", 500))
	got := k.Generate(replay.Provider, big)
	if len(got) != 1 || got[0].Kind != ipc.StreamError || !strings.Contains(got[0].Text, "context_length_exceeded") ||
		!strings.Contains(got[0].Text, "maximum context length is 1000 tokens") {
		t.Fatalf("a request over the window: %+v", got)
	}

	for _, bad := range []string{"many", "0", "-5", "99999999999"} {
		k := sdktest.New(t, sdktest.Capsule{Manifest: replay.Manifest, New: replay.New, Config: map[string]string{"context_window": bad}})
		got := k.Generate(replay.Provider, userRequest("w-3", "hello"))
		if len(got) != 1 || got[0].Kind != ipc.StreamError || !strings.Contains(got[0].Text, "context_window") {
			t.Errorf("context_window %q: %+v", bad, got)
		}
	}
}

// A match with "sent" plays only when the request sends that text
// somewhere (an earlier message, the system prompt, a tool result), not
// only in its last message; the next matching turn plays otherwise.
func TestSentJudgesTheWholeRequest(t *testing.T) {
	const judged = `{"match": {"user": "code word?", "sent": "the word is plum"}}
{"TextDelta": "plum"}
"Done"
{"match": {"user": "code word?", "sent": "result: fig"}}
{"TextDelta": "fig"}
"Done"
{"match": {"user": "code word?"}}
{"TextDelta": "I do not know."}
"Done"
`
	s := mustParse(t, "judged.jsonl", judged)
	ask := func(system string, earlier ...ipc.Message) string {
		t.Helper()
		req := ipc.LLMRequest{System: system, Messages: append(earlier, ipc.TextMessage(ipc.RoleUser, "code word?"))}
		turn, ok := s.Pick(req)
		if !ok {
			t.Fatalf("no turn for %+v", req)
		}
		return turn.Events[0].Text
	}
	for _, tc := range []struct {
		name   string
		system string
		msgs   []ipc.Message
		want   string
	}{
		{"in an earlier user message", "", []ipc.Message{ipc.TextMessage(ipc.RoleUser, "[Summary] the word is plum.")}, "plum"},
		{"in the system prompt", "Remember: the word is plum", nil, "plum"},
		{"in a tool result", "", []ipc.Message{toolResult("c1", "result: fig")}, "fig"},
		{"nowhere", "", []ipc.Message{ipc.TextMessage(ipc.RoleAssistant, "the word is pl")}, "I do not know."},
	} {
		if got := ask(tc.system, tc.msgs...); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if _, err := replay.Parse("s.jsonl", []byte("{\"match\": {\"sent\": \"x\"}}\n\"Done\"\n")); err == nil || !strings.Contains(err.Error(), `give "user"`) {
		t.Fatalf(`"sent" alone parsed: %v`, err)
	}
}
