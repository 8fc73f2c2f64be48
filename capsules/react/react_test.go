package react_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/astrid-go/astrid/capsules/fs"
	"github.com/astrid-go/astrid/capsules/react"
	"github.com/astrid-go/astrid/capsules/replay"
	"github.com/astrid-go/astrid/capsules/session"
	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// setup is what one test's kernel runs besides the agent stack.
type setup struct {
	script    string            // the replay provider's script
	react     map[string]string // the agent's [env]
	assembler map[string]string // the fixture assembler's [env]
	extra     []sdktest.Capsule
}

// boot starts the agent stack: react, the session store, the replay
// provider playing s.script, the fs tools, the fixture assembler, the
// fixture providers and tools, and s.extra.
func boot(t testing.TB, s setup) *sdktest.Kernel {
	t.Helper()
	caps := []sdktest.Capsule{
		{Manifest: react.Manifest, New: react.New, Config: s.react},
		{Manifest: session.Manifest, New: session.New},
		{Manifest: replay.Manifest, New: replay.New, Config: map[string]string{"script": "script.jsonl"}},
		{Manifest: fs.Manifest, New: fs.New},
		{Manifest: fixtureAssemblerManifest, New: newFixtureAssembler, Config: s.assembler},
		{Manifest: fixtureLLMManifest, New: newFixtureLLM},
		{Manifest: fixtureToolsManifest, New: newFixtureTools},
	}
	k := sdktest.NewAgent(t, sdktest.AgentOptions{}, append(caps, s.extra...)...)
	if err := os.WriteFile(filepath.Join(k.Workspace, "script.jsonl"), []byte(s.script), 0o600); err != nil {
		t.Fatal(err)
	}
	return k
}

func writeFile(t testing.TB, k *sdktest.Kernel, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(k.Workspace, name), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// history reads principal's session from the store.
func history(t *testing.T, k *sdktest.Kernel, principal, sessionID string) []ipc.Message {
	t.Helper()
	corr := "h" + strings.ReplaceAll(t.Name(), "/", "_") + sessionID
	if len(corr) > 60 {
		corr = corr[len(corr)-60:]
	}
	body := k.SessionAsk(principal, session.GetMessagesTopic, map[string]string{"session_id": sessionID, "correlation_id": corr}, session.ReplyTopic(session.OpGetMessages, corr))
	var reply session.MessagesReply
	if err := json.Unmarshal(body, &reply); err != nil {
		t.Fatalf("history: %s (%v)", body, err)
	}
	return reply.Messages
}

// roles lists the messages' roles and content kinds, e.g. "user:text".
func roles(msgs []ipc.Message) string {
	kinds := map[ipc.ContentKind]string{ipc.ContentText: "text", ipc.ContentToolCalls: "calls", ipc.ContentToolResult: "result", ipc.ContentMultiPart: "parts"}
	var out []string
	for _, m := range msgs {
		out = append(out, string(m.Role)+":"+kinds[m.Content.Kind])
	}
	return strings.Join(out, " ")
}

func wantFinal(t *testing.T, r sdktest.TurnResult, outcome, textPart string) {
	t.Helper()
	f := r.Final
	if !f.IsFinal || f.Outcome != outcome || !strings.Contains(f.Text, textPart) {
		t.Fatalf("final response %+v; want outcome %q with text containing %q", f, outcome, textPart)
	}
}

// lastEventIsFinal checks that exactly one final came and nothing after it.
func lastEventIsFinal(t *testing.T, r sdktest.TurnResult) {
	t.Helper()
	for i, ev := range r.Events {
		if (ev.Kind == agentclient.EventFinal) != (i == len(r.Events)-1) {
			t.Fatalf("event %d of %d is %v", i, len(r.Events), ev.Kind)
		}
	}
}

func TestRegistrationsMatchManifest(t *testing.T) {
	sdktest.CheckRegistrations(t, react.Manifest, react.New())
}

const helloScript = `{"match": {"user": "hello"}}
{"TextDelta": "Hi"}
{"TextDelta": " there"}
{"Usage": {"input_tokens": 3, "output_tokens": 2}}
"Done"
`

// A turn without tools: the deltas arrive as they stream, before the one
// final answer, and the history holds the prompt and the answer only.
func TestTurnWithoutTools(t *testing.T) {
	k := boot(t, setup{script: helloScript})
	r := k.RunPrompt(ipc.DefaultPrincipal, "s1", "hello", ipc.PromptContext{})
	wantFinal(t, r, ipc.OutcomeAnswer, "Hi there")
	lastEventIsFinal(t, r)
	if r.Final.Text != "Hi there" || r.Text != "Hi there" || len(r.Events) != 3 || r.Events[0].Kind != agentclient.EventDelta || r.Events[0].Delta.Delta != "Hi" {
		t.Fatalf("events %+v", r.Events)
	}
	h := history(t, k, ipc.DefaultPrincipal, "s1")
	if got := roles(h); got != "user:text assistant:text" {
		t.Fatalf("history %s", got)
	}
	if s, _ := h[1].Text(); s != "Hi there" {
		t.Fatalf("stored answer %q", s)
	}
}

const readScript = `{"match": {"tool_results": ["r1"]}}
{"TextDelta": "The notes say hi."}
"Done"
{"match": {"user": "read"}}
{"TextDelta": "Reading."}
{"ToolCallStart": {"id": "r1", "name": "read_file"}}
{"ToolCallDelta": {"id": "r1", "args_delta": "{\"file_path\":"}}
{"ToolCallDelta": {"id": "r1", "args_delta": "\"notes.txt\"}"}}
{"ToolCallEnd": {"id": "r1"}}
"Done"
`

// read_file, then the answer: the call and its result are announced, the
// model gets the result (the replay turn awaiting r1 plays), and the
// history holds user, the call, its result, the answer.
func TestReadFileThenAnswer(t *testing.T) {
	k := boot(t, setup{script: readScript})
	writeFile(t, k, "notes.txt", "hi from the notes")
	r := k.RunPrompt(ipc.DefaultPrincipal, "s1", "read my notes", ipc.PromptContext{})
	wantFinal(t, r, ipc.OutcomeAnswer, "The notes say hi.")
	lastEventIsFinal(t, r)
	if len(r.Started) != 1 || len(r.Finished) != 1 {
		t.Fatalf("tool events %+v / %+v", r.Started, r.Finished)
	}
	st, fin := r.Started[0], r.Finished[0]
	if st.Name != "read_file" || string(st.Arguments) != `{"file_path":"notes.txt"}` || st.CallID == "r1" || st.CallID == "" {
		t.Fatalf("started %+v (the call id on the bus is minted, not the model's)", st)
	}
	if fin.CallID != st.CallID || fin.IsError || !strings.Contains(fin.Summary, "hi from the notes") || fin.DurationMS < 0 {
		t.Fatalf("finished %+v", fin)
	}
	h := history(t, k, ipc.DefaultPrincipal, "s1")
	if got := roles(h); got != "user:text assistant:calls tool:result assistant:text" {
		t.Fatalf("history %s", got)
	}
	if c := h[1].Content.ToolCalls[0]; c.ID != "r1" || c.Name != "read_file" {
		t.Fatalf("stored call %+v", c)
	}
	if res := h[2].Content.ToolResult; res.CallID != "r1" || res.IsError || !strings.Contains(res.Content, "hi from the notes") {
		t.Fatalf("stored result %+v", res)
	}
}

// Three calls in one round go out together; the model is asked again only
// once all three are back.
func TestThreeParallelToolCalls(t *testing.T) {
	script := `{"match": {"tool_results": ["a", "b", "c"]}}
{"TextDelta": "Read all three."}
"Done"
{"match": {"user": "three"}}
{"ToolCallStart": {"id": "a", "name": "read_file"}}
{"ToolCallDelta": {"id": "a", "args_delta": "{\"file_path\":\"a.txt\"}"}}
{"ToolCallStart": {"id": "b", "name": "read_file"}}
{"ToolCallDelta": {"id": "b", "args_delta": "{\"file_path\":\"b.txt\"}"}}
{"ToolCallStart": {"id": "c", "name": "read_file"}}
{"ToolCallDelta": {"id": "c", "args_delta": "{\"file_path\":\"c.txt\"}"}}
"Done"
`
	k := boot(t, setup{script: script})
	for _, n := range []string{"b", "c"} {
		writeFile(t, k, n+".txt", "file "+n)
	}
	writeFile(t, k, "a.txt", strings.Repeat("é", 500)) // a summary is cut by runes
	r := k.RunPrompt(ipc.DefaultPrincipal, "s1", "three files", ipc.PromptContext{})
	wantFinal(t, r, ipc.OutcomeAnswer, "Read all three.")
	if len(r.Started) != 3 || len(r.Finished) != 3 {
		t.Fatalf("tool events %+v / %+v", r.Started, r.Finished)
	}
	// All three were dispatched before any result came back.
	firstFinished := -1
	started := 0
	for i, ev := range r.Events {
		if ev.Kind == agentclient.EventToolStarted {
			started++
		}
		if ev.Kind == agentclient.EventToolFinished && firstFinished < 0 {
			firstFinished = i
			if started != 3 {
				t.Fatalf("a result came back after %d of 3 calls went out", started)
			}
		}
	}
	ids := map[string]bool{}
	cut := 0
	for _, f := range r.Finished {
		ids[f.CallID] = true
		if f.IsError || !utf8.ValidString(f.Summary) || utf8.RuneCountInString(f.Summary) > ipc.ToolSummaryRunes {
			t.Fatalf("finished %+v", f)
		}
		if utf8.RuneCountInString(f.Summary) == ipc.ToolSummaryRunes {
			cut++
		}
	}
	if cut != 1 {
		t.Fatalf("%d summaries cut at %d runes, want the long file's", cut, ipc.ToolSummaryRunes)
	}
	if len(ids) != 3 {
		t.Fatalf("call ids %v", ids)
	}
	if got := roles(history(t, k, ipc.DefaultPrincipal, "s1")); got != "user:text assistant:calls tool:result tool:result tool:result assistant:text" {
		t.Fatalf("history %s", got)
	}
}

// A tool's error is a result like any other: shown as is_error and fed
// back to the model, which answers.
func TestToolErrorIsFedBack(t *testing.T) {
	script := strings.ReplaceAll(readScript, "notes.txt", "missing.txt")
	k := boot(t, setup{script: script})
	r := k.RunPrompt(ipc.DefaultPrincipal, "s1", "read it", ipc.PromptContext{})
	wantFinal(t, r, ipc.OutcomeAnswer, "The notes say hi.")
	if len(r.Finished) != 1 || !r.Finished[0].IsError {
		t.Fatalf("finished %+v", r.Finished)
	}
	h := history(t, k, ipc.DefaultPrincipal, "s1")
	if res := h[2].Content.ToolResult; !res.IsError || res.CallID != "r1" {
		t.Fatalf("stored result %+v", res)
	}
}

// An unknown tool is answered by the router with an error result, which
// the model reads.
func TestUnknownToolIsAnErrorResult(t *testing.T) {
	script := strings.ReplaceAll(readScript, `"name": "read_file"`, `"name": "no_such_tool"`)
	k := boot(t, setup{script: script})
	r := k.RunPrompt(ipc.DefaultPrincipal, "s1", "read it", ipc.PromptContext{})
	wantFinal(t, r, ipc.OutcomeAnswer, "The notes say hi.")
	if len(r.Finished) != 1 || !r.Finished[0].IsError || r.Finished[0].Name != "no_such_tool" || !strings.Contains(r.Finished[0].Summary, "no_such_tool") {
		t.Fatalf("finished %+v", r.Finished)
	}
}

// Arguments that are not JSON are never dispatched: the model gets an
// error result saying so and what it wrote, and answers.
func TestInvalidJSONArgumentsAreAnsweredNotDispatched(t *testing.T) {
	script := `{"match": {"tool_results": ["j1"]}}
{"TextDelta": "Sorry about that."}
"Done"
{"match": {"user": "broken"}}
{"ToolCallStart": {"id": "j1", "name": "write_file"}}
{"ToolCallDelta": {"id": "j1", "args_delta": "{\"file_path\": \"x.txt\", \"content\": "}}
"Done"
`
	k := boot(t, setup{script: script})
	r := k.RunPrompt(ipc.DefaultPrincipal, "s1", "broken call", ipc.PromptContext{})
	wantFinal(t, r, ipc.OutcomeAnswer, "Sorry about that.")
	if len(r.Started) != 1 || len(r.Finished) != 1 || !r.Finished[0].IsError || !strings.HasPrefix(r.Finished[0].Summary, "invalid JSON arguments: ") {
		t.Fatalf("tool events %+v / %+v", r.Started, r.Finished)
	}
	var shown string
	if err := json.Unmarshal(r.Started[0].Arguments, &shown); err != nil || !strings.Contains(shown, `"file_path": "x.txt"`) {
		t.Fatalf("started arguments %s: want the model's text as a JSON string", r.Started[0].Arguments)
	}
	if _, err := os.Stat(filepath.Join(k.Workspace, "x.txt")); !os.IsNotExist(err) {
		t.Fatalf("the call ran: %v", err)
	}
	h := history(t, k, ipc.DefaultPrincipal, "s1")
	if got := roles(h); got != "user:text assistant:calls tool:result assistant:text" {
		t.Fatalf("history %s", got)
	}
	if c := h[1].Content.ToolCalls[0]; string(c.Arguments) != "{}" {
		t.Fatalf("stored arguments %s", c.Arguments)
	}
	if res := h[2].Content.ToolResult; !res.IsError || !strings.Contains(res.Content, `"content":`) {
		t.Fatalf("stored result %+v", res)
	}
}

// With max_iterations 2, a model that keeps calling tools is stopped when
// its second request asks for tools again; that round is never run.
func TestIterationCap(t *testing.T) {
	script := `{"match": {"tool_results": ["i1"]}}
{"ToolCallStart": {"id": "i2", "name": "probe"}}
"Done"
{"match": {"tool_results": ["i2"]}}
{"TextDelta": "never reached"}
"Done"
{"match": {"user": "loop"}}
{"ToolCallStart": {"id": "i1", "name": "probe"}}
"Done"
`
	k := boot(t, setup{script: script, react: map[string]string{"max_iterations": "2"}})
	r := k.RunPrompt(ipc.DefaultPrincipal, "s1", "loop forever", ipc.PromptContext{})
	wantFinal(t, r, ipc.OutcomeIterationCap, "limit of 2 model requests")
	if len(r.Started) != 1 {
		t.Fatalf("started %+v: the capped round ran", r.Started)
	}
	// The first round is in the history; the capped one is not.
	if got := roles(history(t, k, ipc.DefaultPrincipal, "s1")); got != "user:text assistant:calls tool:result" {
		t.Fatalf("history %s", got)
	}
}

// Each phase has its limit, enforced by the watchdog tick even when every
// other party is silent; the final response names the phase and the limit.
func TestPhaseTimeouts(t *testing.T) {
	hangScript := helloScript + `{"match": {"user": ""}}
{"ToolCallStart": {"id": "h1", "name": "hang"}}
"Done"
`
	for _, tc := range []struct {
		name      string
		s         setup
		provider  string
		want      string
		wantDelta string
	}{
		{"silent prompt builder", setup{assembler: map[string]string{"mode": "silent"}, react: map[string]string{"prompt_timeout_secs": "1"}}, "", "prompt_timeout_secs", ""},
		{"provider never answers", setup{react: map[string]string{"stream_timeout_secs": "1"}}, "mute", "stream_timeout_secs", ""},
		{"provider stops mid-stream", setup{react: map[string]string{"stream_timeout_secs": "1"}}, "halt", "stream_timeout_secs", "partial"},
		{"tool never answers", setup{script: hangScript, react: map[string]string{"tool_timeout_secs": "1"}}, "", "(hang) did not finish within 1 s (tool_timeout_secs)", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.s.script == "" {
				tc.s.script = helloScript
			}
			k := boot(t, tc.s)
			r := k.RunPrompt(ipc.DefaultPrincipal, "s1", "please wait", ipc.PromptContext{Provider: tc.provider})
			wantFinal(t, r, ipc.OutcomeTimeout, tc.want)
			lastEventIsFinal(t, r)
			if r.Text != tc.wantDelta {
				t.Fatalf("deltas %q, want %q", r.Text, tc.wantDelta)
			}
			if tc.name == "tool never answers" {
				// The timed-out call was cancelled: the tool capsule is free
				// again (a hang left alone would hold it for a minute).
				if res := k.CallTool("probe", struct{}{}); res.Content != "alive" {
					t.Fatalf("probe %+v", res)
				}
			}
			// The agent is idle again: the next prompt is answered.
			if tc.s.assembler["mode"] != "silent" {
				wantFinal(t, k.RunPrompt(ipc.DefaultPrincipal, "s1", "hello", ipc.PromptContext{}), ipc.OutcomeAnswer, "Hi there")
			}
		})
	}
}

// Cancel while a tool runs: the call is cancelled (the tool returns) and
// the turn ends with outcome cancelled; nothing of the round is stored.
func TestCancelMidTool(t *testing.T) {
	k := boot(t, setup{script: `{"match": {"user": ""}}
{"ToolCallStart": {"id": "h1", "name": "hang"}}
"Done"
`})
	turn := k.StartTurn(ipc.DefaultPrincipal, "s1", "wait for it", ipc.PromptContext{})
	ctx, cancel := context.WithTimeout(context.Background(), k.Timeout)
	defer cancel()
	ev, err := turn.Next(ctx)
	if err != nil || ev.Kind != agentclient.EventToolStarted || ev.ToolStarted.Name != "hang" {
		t.Fatalf("first event %+v %v", ev, err)
	}
	if err := turn.Cancel(); err != nil {
		t.Fatal(err)
	}
	r := k.Collect(turn)
	wantFinal(t, r, ipc.OutcomeCancelled, "Cancelled")
	if r.Final.TurnID != turn.TurnID() {
		t.Fatalf("final of turn %q, want %q", r.Final.TurnID, turn.TurnID())
	}
	if res := k.CallTool("probe", struct{}{}); res.Content != "alive" {
		t.Fatalf("probe %+v", res)
	}
	if got := roles(history(t, k, ipc.DefaultPrincipal, "s1")); got != "user:text" {
		t.Fatalf("history %s", got)
	}
}

// A new prompt on a busy session pre-empts the running turn, which gets
// its own final (cancelled); the new one is answered, and neither client
// takes the other's end for its own.
func TestNewPromptPreemptsRunningTurn(t *testing.T) {
	k := boot(t, setup{script: helloScript + `{"match": {"user": "wait"}}
{"ToolCallStart": {"id": "h1", "name": "hang"}}
"Done"
`})
	first := k.StartTurn(ipc.DefaultPrincipal, "s1", "wait for it", ipc.PromptContext{})
	ctx, cancel := context.WithTimeout(context.Background(), k.Timeout)
	defer cancel()
	if ev, err := first.Next(ctx); err != nil || ev.Kind != agentclient.EventToolStarted {
		t.Fatalf("first event %+v %v", ev, err)
	}
	second := k.RunPrompt(ipc.DefaultPrincipal, "s1", "hello", ipc.PromptContext{})
	wantFinal(t, second, ipc.OutcomeAnswer, "Hi there")
	wantFinal(t, k.Collect(first), ipc.OutcomeCancelled, "newer prompt")
}

// A model that says nothing still ends the turn, with outcome empty.
func TestEmptyModelOutput(t *testing.T) {
	k := boot(t, setup{script: helloScript})
	r := k.RunPrompt(ipc.DefaultPrincipal, "s1", "hello", ipc.PromptContext{Provider: "empty"})
	wantFinal(t, r, ipc.OutcomeEmpty, "no text")
	lastEventIsFinal(t, r)
}

// A malformed stream event ends the turn with an error naming it.
func TestMalformedStreamEvent(t *testing.T) {
	k := boot(t, setup{script: helloScript})
	r := k.RunPrompt(ipc.DefaultPrincipal, "s1", "hello", ipc.PromptContext{Provider: "garbage"})
	wantFinal(t, r, ipc.OutcomeError, `provider "garbage" sent a malformed stream event`)
	if r.Text != "fine so far" {
		t.Fatalf("deltas %q", r.Text)
	}
}

// A provider that is not loaded is named, with how to choose another.
func TestNoSuchProvider(t *testing.T) {
	k := boot(t, setup{script: helloScript})
	r := k.RunPrompt(ipc.DefaultPrincipal, "s1", "hello", ipc.PromptContext{Provider: "nope"})
	wantFinal(t, r, ipc.OutcomeError, `no LLM provider "nope" is loaded`)
	if !strings.Contains(r.Final.Text, "--provider") || !strings.Contains(r.Final.Text, "astrid models set") {
		t.Fatalf("final %q does not say how to choose", r.Final.Text)
	}
	// [env] provider is the default; the prompt's context overrides it.
	k = boot(t, setup{script: helloScript, react: map[string]string{"provider": "echo", "model": "m-env"}})
	var e echoed
	r = k.RunPrompt(ipc.DefaultPrincipal, "s1", "hello", ipc.PromptContext{})
	if err := json.Unmarshal([]byte(r.Final.Text), &e); err != nil || e.Model != "m-env" {
		t.Fatalf("echo %q (%v)", r.Final.Text, err)
	}
	r = k.RunPrompt(ipc.DefaultPrincipal, "s1", "hello", ipc.PromptContext{Provider: "replay"})
	wantFinal(t, r, ipc.OutcomeAnswer, "Hi there")
}

// The model sees the prompt builder's system prompt and tools, and the
// user_context_prefix before the last user message; the history does not
// keep the prefix.
func TestPromptBuilderOutputReachesTheModel(t *testing.T) {
	k := boot(t, setup{script: helloScript, assembler: map[string]string{"prefix": "[context: tuesday]"}})
	r := k.RunPrompt(ipc.DefaultPrincipal, "s1", "what day is it", ipc.PromptContext{Provider: "echo", Model: "m1"})
	var e echoed
	if err := json.Unmarshal([]byte(r.Final.Text), &e); err != nil {
		t.Fatalf("echo %q: %v", r.Final.Text, err)
	}
	if e.System != fixtureSystemPrompt || e.LastUser != "[context: tuesday]\nwhat day is it" || e.Model != "m1" {
		t.Fatalf("the model saw %+v", e)
	}
	if !strings.Contains(strings.Join(e.Tools, ","), "read_file") {
		t.Fatalf("tools %v", e.Tools)
	}
	h := history(t, k, ipc.DefaultPrincipal, "s1")
	if s, _ := h[0].Text(); s != "what day is it" {
		t.Fatalf("stored prompt %q", s)
	}
}

// A prompt builder that fails, or answers garbage, ends the turn with an
// error saying so (not a timeout).
func TestPromptBuilderErrorAndGarbage(t *testing.T) {
	k := boot(t, setup{script: helloScript, assembler: map[string]string{"mode": "error"}})
	r := k.RunPrompt(ipc.DefaultPrincipal, "s1", "hello", ipc.PromptContext{})
	wantFinal(t, r, ipc.OutcomeError, "the fixture was told to fail")
	k = boot(t, setup{script: helloScript, assembler: map[string]string{"mode": "garbage"}})
	r = k.RunPrompt(ipc.DefaultPrincipal, "s1", "hello", ipc.PromptContext{})
	wantFinal(t, r, ipc.OutcomeError, "The prompt builder's answer does not decode")
}

// Two sessions of one principal keep separate histories and do not see
// each other's events.
func TestSecondSessionIsIsolated(t *testing.T) {
	k := boot(t, setup{script: readScript + helloScript})
	writeFile(t, k, "notes.txt", "notes")
	a := k.StartTurn(ipc.DefaultPrincipal, "sa", "read my notes", ipc.PromptContext{})
	b := k.StartTurn(ipc.DefaultPrincipal, "sb", "hello", ipc.PromptContext{})
	ra, rb := k.Collect(a), k.Collect(b)
	wantFinal(t, ra, ipc.OutcomeAnswer, "The notes say hi.")
	wantFinal(t, rb, ipc.OutcomeAnswer, "Hi there")
	if len(rb.Started) != 0 || rb.Text != "Hi there" {
		t.Fatalf("session b saw %+v", rb.Events)
	}
	if got := roles(history(t, k, ipc.DefaultPrincipal, "sa")); got != "user:text assistant:calls tool:result assistant:text" {
		t.Fatalf("history a %s", got)
	}
	if got := roles(history(t, k, ipc.DefaultPrincipal, "sb")); got != "user:text assistant:text" {
		t.Fatalf("history b %s", got)
	}
}

// Two principals on the same session id: separate turns, histories and
// events (the host keeps each principal's KV apart).
func TestTwoPrincipalsAreIsolated(t *testing.T) {
	k := boot(t, setup{script: readScript + helloScript})
	writeFile(t, k, "notes.txt", "notes")
	alice := k.StartTurn("alice", "shared", "read my notes", ipc.PromptContext{})
	bob := k.StartTurn("bob", "shared", "hello", ipc.PromptContext{})
	ra, rb := k.Collect(alice), k.Collect(bob)
	wantFinal(t, ra, ipc.OutcomeAnswer, "The notes say hi.")
	wantFinal(t, rb, ipc.OutcomeAnswer, "Hi there")
	if len(rb.Started) != 0 {
		t.Fatalf("bob saw alice's tool calls: %+v", rb.Started)
	}
	if got := roles(history(t, k, "alice", "shared")); got != "user:text assistant:calls tool:result assistant:text" {
		t.Fatalf("alice's history %s", got)
	}
	if got := roles(history(t, k, "bob", "shared")); got != "user:text assistant:text" {
		t.Fatalf("bob's history %s", got)
	}
}

// A session id that is not [A-Za-z0-9_-]{1,64} is refused with a clear
// final error, and nothing is stored.
func TestBadSessionIDs(t *testing.T) {
	k := boot(t, setup{script: helloScript})
	for _, id := range []string{"../etc", "a.b", "a/b", "a b", strings.Repeat("x", 65)} {
		r := k.RunPrompt(ipc.DefaultPrincipal, id, "hello", ipc.PromptContext{})
		wantFinal(t, r, ipc.OutcomeError, "Invalid session id")
		if r.Final.SessionID != id {
			t.Fatalf("final for session %q", r.Final.SessionID)
		}
	}
}

// A 1 MiB prompt cannot be sent: the client says so at once, and the
// agent serves the next prompt.
func TestHugePromptIsRefusedClearly(t *testing.T) {
	k := boot(t, setup{script: helloScript})
	_, err := agentclient.Start(context.Background(), k.Agent(), agentclient.Prompt{SessionID: "s1", Text: strings.Repeat("a", 1<<20)})
	if err == nil || !strings.Contains(err.Error(), "1 MiB") {
		t.Fatalf("err %v", err)
	}
	wantFinal(t, k.RunPrompt(ipc.DefaultPrincipal, "s1", "hello", ipc.PromptContext{}), ipc.OutcomeAnswer, "Hi there")
}

// An empty prompt ends in a final error.
func TestEmptyPrompt(t *testing.T) {
	k := boot(t, setup{script: helloScript})
	wantFinal(t, k.RunPrompt(ipc.DefaultPrincipal, "s1", "  ", ipc.PromptContext{}), ipc.OutcomeError, "empty")
}

// Bad [env] limits fall back to the defaults (and are warned about): the
// turn still works.
func TestBadLimitsUseDefaults(t *testing.T) {
	k := boot(t, setup{script: helloScript, react: map[string]string{"max_iterations": "-3", "stream_timeout_secs": "soon", "tool_timeout_secs": `"60"`}})
	wantFinal(t, k.RunPrompt(ipc.DefaultPrincipal, "s1", "hello", ipc.PromptContext{}), ipc.OutcomeAnswer, "Hi there")
}

// Events for a request that is over are dropped: a provider that goes on
// after its Done changes nothing (no second answer, no tool call run, no
// history), and the session's next turn is undisturbed.
func TestStaleStreamEventsAreIgnored(t *testing.T) {
	k := boot(t, setup{script: helloScript})
	r := k.RunPrompt(ipc.DefaultPrincipal, "s1", "first", ipc.PromptContext{Provider: "double"})
	wantFinal(t, r, ipc.OutcomeAnswer, "one")
	if r.Final.Text != "one" || r.Text != "one" {
		t.Fatalf("final %q, deltas %q", r.Final.Text, r.Text)
	}
	// The stale events were queued to the agent before this prompt.
	r = k.RunPrompt(ipc.DefaultPrincipal, "s1", "hello", ipc.PromptContext{})
	wantFinal(t, r, ipc.OutcomeAnswer, "Hi there")
	if len(r.Started) != 0 || r.Text != "Hi there" {
		t.Fatalf("second turn %+v", r.Events)
	}
	if got := roles(history(t, k, ipc.DefaultPrincipal, "s1")); got != "user:text assistant:text user:text assistant:text" {
		t.Fatalf("history %s", got)
	}
}

// A replayed turn with five read_file calls in one round, end to end in
// process: prompt, session, prompt builder, two model requests, five tool
// calls through the router, the answer stored and delivered.
func BenchmarkReplayedTurnFiveReads(b *testing.B) {
	var script strings.Builder
	script.WriteString(`{"match": {"tool_results": ["f1", "f2", "f3", "f4", "f5"]}}` + "\n" + `{"TextDelta": "Read five."}` + "\n" + `"Done"` + "\n")
	script.WriteString(`{"match": {"user": "five"}}` + "\n")
	for i := 1; i <= 5; i++ {
		id := "f" + string(rune('0'+i))
		script.WriteString(`{"ToolCallStart": {"id": "` + id + `", "name": "read_file"}}` + "\n")
		script.WriteString(`{"ToolCallDelta": {"id": "` + id + `", "args_delta": "{\"file_path\":\"notes.txt\"}"}}` + "\n")
	}
	script.WriteString(`"Done"` + "\n")
	k := boot(b, setup{script: script.String()})
	writeFile(b, k, "notes.txt", "some notes")
	b.ResetTimer()
	for i := range b.N {
		r := k.RunPrompt(ipc.DefaultPrincipal, "bench"+strconv.Itoa(i), "five files", ipc.PromptContext{})
		if r.Final.Outcome != ipc.OutcomeAnswer || len(r.Finished) != 5 {
			b.Fatalf("turn %+v", r.Final)
		}
	}
}
