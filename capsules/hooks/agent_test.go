package hooks_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/capsules/approval"
	"github.com/astrid-go/astrid/capsules/fs"
	"github.com/astrid-go/astrid/capsules/hooks"
	"github.com/astrid-go/astrid/capsules/promptbuilder"
	"github.com/astrid-go/astrid/capsules/react"
	"github.com/astrid-go/astrid/capsules/replay"
	"github.com/astrid-go/astrid/capsules/session"
	"github.com/astrid-go/astrid/capsules/shell"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

func TestRegistrationsMatchManifest(t *testing.T) {
	sdktest.CheckRegistrations(t, hooks.Manifest, hooks.New())
}

// bootAgent runs the agent stack astrid runs (react, the prompt builder,
// the session store, the hooks and approval capsules ahead of the router,
// the fs and shell tools) with the replay provider playing script, the
// hooks table cfg, and the scripts written into the workspace's hooks/
// directory (name → body; each made executable).
func bootAgent(t testing.TB, cfg hooks.Config, script string, scripts map[string]string, extra ...sdktest.Capsule) *sdktest.Kernel {
	t.Helper()
	table, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	k := sdktest.NewAgent(t, sdktest.AgentOptions{}, append(agentStack(), append([]sdktest.Capsule{
		{Manifest: hooks.Manifest, New: hooks.New, Config: map[string]string{hooks.ConfigKey: string(table)}},
	}, extra...)...)...)
	write(t, k, "script.jsonl", script)
	for name, body := range scripts {
		write(t, k, filepath.Join("hooks", name), body)
		if err := os.Chmod(filepath.Join(k.Workspace, "hooks", name), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return k
}

// agentStack is the agent stack astrid runs but the hooks capsule.
func agentStack() []sdktest.Capsule {
	return []sdktest.Capsule{
		{Manifest: react.Manifest, New: react.New, Config: map[string]string{"provider": "replay"}},
		{Manifest: promptbuilder.Manifest, New: promptbuilder.New},
		{Manifest: session.Manifest, New: session.New},
		{Manifest: replay.Manifest, New: replay.New, Config: map[string]string{"script": "script.jsonl"}},
		{Manifest: approval.Manifest, New: approval.New, Config: map[string]string{approval.ApproversKey: approval.DefaultApprovers + "," + sdktest.ApproverID}},
		{Manifest: fs.Manifest, New: fs.New},
		{Manifest: shell.Manifest, New: shell.New},
	}
}

func write(t testing.TB, k *sdktest.Kernel, name, body string) {
	t.Helper()
	path := filepath.Join(k.Workspace, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, k *sdktest.Kernel, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(k.Workspace, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// toolTurn is a replay script in which the model, asked with prompt,
// calls tool with args (call id id), then answers "done <id>".
func toolTurn(prompt, id, tool string, args any) string {
	raw, _ := json.Marshal(args)
	argsJSON, _ := json.Marshal(string(raw))
	return `{"match": {"tool_results": ["` + id + `"]}}
{"TextDelta": "done ` + id + `"}
"Done"
{"match": {"user": "` + prompt + `"}}
{"ToolCallStart": {"id": "` + id + `", "name": "` + tool + `"}}
{"ToolCallDelta": {"id": "` + id + `", "args_delta": ` + string(argsJSON) + `}}
{"ToolCallEnd": {"id": "` + id + `"}}
"Done"
`
}

// denyRm is a PreToolUse hook as people write them for Claude Code: it
// reads the call with jq and refuses any rm with exit code 2, the reason
// on stderr.
const denyRm = `#!/bin/bash
cmd=$(jq -r '.tool_input.command // empty')
if printf '%s' "$cmd" | grep -Eq '(^|[;&| ])rm( |$)'; then
  echo "Blocked: rm is not allowed here ($cmd)" >&2
  exit 2
fi
exit 0
`

// A Claude Code-style PreToolUse script denies rm: the call never runs,
// nobody is asked, and the model reads the script's reason; a command
// without rm goes on to the shell, which asks the person as always.
func TestPreToolUseDeniesRm(t *testing.T) {
	cfg := hooks.Config{PreToolUse: []hooks.Hook{{Matcher: "Bash", Command: "hooks/deny-rm.sh"}, {Matcher: "Bash", Command: "jq -c '{e: .hook_event_name, s: .session_id, t: .tool_name}' >> pre.log"}}}
	script := toolTurn("clean up", "c1", "run_shell_command", map[string]string{"command": "rm -f keep.txt"}) +
		toolTurn("say hi", "c2", "run_shell_command", map[string]string{"command": "echo hi > said.txt"})
	k := bootAgent(t, cfg, script, map[string]string{"deny-rm.sh": denyRm})
	write(t, k, "keep.txt", "precious")

	r := k.RunPromptAnswering(ipc.DefaultPrincipal, "s1", "clean up")
	if r.Final.Outcome != ipc.OutcomeAnswer || len(r.Finished) != 1 || !r.Finished[0].IsError {
		t.Fatalf("turn: %+v", r)
	}
	res := k.LastToolResult(ipc.DefaultPrincipal, "s1")
	if !res.IsError || !strings.Contains(res.Content, "refused by a PreToolUse hook: Blocked: rm is not allowed here (rm -f keep.txt)") {
		t.Fatalf("the model read %+v", res)
	}
	if read(t, k, "keep.txt") != "precious" {
		t.Fatal("rm ran")
	}

	r = k.RunPromptAnswering(ipc.DefaultPrincipal, "s1", "say hi", ipc.DecisionApprove)
	asked := r.Approvals
	if r.Final.Outcome != ipc.OutcomeAnswer || len(asked) != 1 || r.Finished[0].IsError {
		t.Fatalf("turn: %+v, asked %+v", r, asked)
	}
	if got := read(t, k, "said.txt"); got != "hi\n" {
		t.Fatalf("said.txt = %q", got)
	}
	// The second hook ran for the allowed call only (the first refused the
	// other), told its session.
	if got := read(t, k, "pre.log"); got != `{"e":"PreToolUse","s":"s1","t":"run_shell_command"}`+"\n" {
		t.Fatalf("pre.log = %q", got)
	}
}

// JSON answers: permissionDecision deny refuses with its reason;
// updatedInput changes the arguments the tool gets; continue: false
// refuses with stopReason.
func TestPreToolUseJSONAnswers(t *testing.T) {
	const decide = `#!/bin/bash
in=$(cat)
path=$(printf '%s' "$in" | jq -r '.tool_input.file_path')
event=$(printf '%s' "$in" | jq -r '.hook_event_name')
case "$path" in
  secret.txt) echo '{"hookSpecificOutput":{"hookEventName":"'"$event"'","permissionDecision":"deny","permissionDecisionReason":"secrets stay secret"}}' ;;
  old.txt) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"file_path":"new.txt"}}}' ;;
  stop.txt) echo '{"continue":false,"stopReason":"no more reading today"}' ;;
esac
`
	cfg := hooks.Config{PreToolUse: []hooks.Hook{{Matcher: "read_file", Command: "hooks/decide.sh"}}}
	script := toolTurn("read secret", "c1", "read_file", map[string]string{"file_path": "secret.txt"}) +
		toolTurn("read old", "c2", "read_file", map[string]string{"file_path": "old.txt"}) +
		toolTurn("read stop", "c3", "read_file", map[string]string{"file_path": "stop.txt"})
	k := bootAgent(t, cfg, script, map[string]string{"decide.sh": decide})
	write(t, k, "secret.txt", "s3cr3t")
	write(t, k, "old.txt", "OLD")
	write(t, k, "new.txt", "NEW")
	write(t, k, "stop.txt", "STOP")

	for _, c := range []struct{ prompt, want string }{
		{"read secret", "read_file was refused by a PreToolUse hook: secrets stay secret"},
		{"read stop", "read_file was refused by a PreToolUse hook: no more reading today"},
	} {
		k.RunPromptAnswering(ipc.DefaultPrincipal, "s1", c.prompt)
		if res := k.LastToolResult(ipc.DefaultPrincipal, "s1"); !res.IsError || res.Content != c.want {
			t.Errorf("%s: the model read %+v, want %q", c.prompt, res, c.want)
		}
	}
	k.RunPromptAnswering(ipc.DefaultPrincipal, "s1", "read old")
	if res := k.LastToolResult(ipc.DefaultPrincipal, "s1"); res.IsError || !strings.Contains(res.Content, "NEW") {
		t.Errorf("read old: the model read %+v, want new.txt's content", res)
	}
}

// Bad hooks: one that hangs past its timeout refuses the call (a guard
// that cannot decide lets nothing by), saying so; one that prints garbage
// or exits 1 decides nothing, and the call goes on; the problem is logged.
func TestPreToolUseBadHooks(t *testing.T) {
	for _, c := range []struct {
		name, body string
		refused    string // "" when the call goes on
		log        string
	}{
		{"hang", "#!/bin/bash\nsleep 30\n", "did not finish within 1 s and was stopped", "did not finish within 1 s"},
		{"garbage", "#!/bin/bash\necho 'not json {'\n", "", "printed something that is not a JSON object"},
		{"broken-json", "#!/bin/bash\necho '{\"decision\": '\n", "", "printed JSON that does not decode"},
		{"exit1", "#!/bin/bash\necho oops >&2\nexit 1\n", "", "exited 1: oops"},
		{"missing", "", "", "exited 127"},
	} {
		t.Run(c.name, func(t *testing.T) {
			scripts := map[string]string{c.name + ".sh": c.body}
			if c.body == "" {
				scripts = nil
			}
			cfg := hooks.Config{PreToolUse: []hooks.Hook{{Command: "hooks/" + c.name + ".sh", TimeoutSecs: 1}}}
			k := bootAgent(t, cfg, toolTurn("read it", "c1", "read_file", map[string]string{"file_path": "a.txt"}), scripts)
			write(t, k, "a.txt", "CONTENT")
			r := k.RunPromptAnswering(ipc.DefaultPrincipal, "s1", "read it")
			if r.Final.Outcome != ipc.OutcomeAnswer {
				t.Fatalf("turn: %+v", r.Final)
			}
			res := k.LastToolResult(ipc.DefaultPrincipal, "s1")
			if c.refused != "" {
				if !res.IsError || !strings.Contains(res.Content, c.refused) {
					t.Fatalf("the model read %+v, want a refusal saying %q", res, c.refused)
				}
			} else if res.IsError || res.Content != "CONTENT" {
				t.Fatalf("the model read %+v, want the file", res)
			}
			if !strings.Contains(k.Logs(), c.log) {
				t.Fatalf("log lacks %q:\n%s", c.log, k.Logs())
			}
		})
	}
}

// PostToolUse hooks are told the call's name, arguments and outcome (its
// content too).
func TestPostToolUseSeesTheCall(t *testing.T) {
	cfg := hooks.Config{PostToolUse: []hooks.Hook{{Matcher: "Write|Edit", Command: "cat >> post.log; echo >> post.log"}}}
	script := toolTurn("write it", "c1", "write_file", map[string]string{"file_path": "out.txt", "content": "hello"}) +
		toolTurn("read it", "c2", "read_file", map[string]string{"file_path": "out.txt"})
	k := bootAgent(t, cfg, script, nil)
	k.RunPromptAnswering(ipc.DefaultPrincipal, "s1", "write it", ipc.DecisionApprove)
	k.RunPromptAnswering(ipc.DefaultPrincipal, "s1", "read it")
	lines := strings.Split(strings.TrimSpace(read(t, k, "post.log")), "\n")
	if len(lines) != 1 {
		t.Fatalf("post.log has %d lines, want 1 (read_file does not match): %q", len(lines), lines)
	}
	var in hooks.Input
	if err := json.Unmarshal([]byte(lines[0]), &in); err != nil {
		t.Fatal(err)
	}
	if in.HookEventName != hooks.PostToolUse || in.ToolName != "write_file" || in.SessionID != "s1" ||
		!strings.Contains(string(in.ToolInput), `"content":"hello"`) || !strings.Contains(string(in.ToolResponse), `"is_error":false`) ||
		!strings.Contains(string(in.ToolResponse), `"content":"`) {
		t.Fatalf("PostToolUse input %+v", in)
	}
	// Hooks that say nothing add nothing to what the model reads.
	if got := k.LastToolResult(ipc.DefaultPrincipal, "s1"); strings.Contains(got.Content, "PostToolUse") {
		t.Fatalf("a silent hook's call reached the model as %q", got.Content)
	}
}

// What PostToolUse hooks answer is given to the model after the call's
// result, as Claude Code gives it: additionalContext, the reason of a
// decision "block", and the stderr of exit 2 (the tool has run either
// way); a hook that prints garbage adds nothing.
func TestPostToolUseAnswersReachTheModel(t *testing.T) {
	const lint = `#!/bin/bash
case "$(jq -r .tool_name)" in
  write_file) echo '{"decision":"block","reason":"lint: trailing space on line 1","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"CTX-POST"}}' ;;
  read_file) echo "STDERR-POST: do not read secrets" >&2; exit 2 ;;
  *) echo 'not json' ;;
esac
`
	cfg := hooks.Config{PostToolUse: []hooks.Hook{{Command: "hooks/lint.sh"}}}
	script := toolTurn("write it", "c1", "write_file", map[string]string{"file_path": "out.txt", "content": "hello "}) +
		toolTurn("read it", "c2", "read_file", map[string]string{"file_path": "out.txt"}) +
		toolTurn("list it", "c3", "list_directory", map[string]string{"dir_path": "."})
	k := bootAgent(t, cfg, script, map[string]string{"lint.sh": lint})
	for _, tc := range []struct {
		prompt, decision, want, not string
	}{
		{"write it", ipc.DecisionApprove, "\n\nPostToolUse hook feedback: lint: trailing space on line 1\n\nPostToolUse hook context: CTX-POST", ""},
		{"read it", "", "hello \n\nPostToolUse hook feedback: STDERR-POST: do not read secrets", ""},
		{"list it", "", "out.txt", "PostToolUse"},
	} {
		var r sdktest.TurnResult
		if tc.decision != "" {
			r = k.RunPromptAnswering(ipc.DefaultPrincipal, "s1", tc.prompt, tc.decision)
		} else {
			r = k.RunPromptAnswering(ipc.DefaultPrincipal, "s1", tc.prompt)
		}
		if r.Final.Outcome != ipc.OutcomeAnswer {
			t.Fatalf("%s: %+v", tc.prompt, r.Final)
		}
		got := k.LastToolResult(ipc.DefaultPrincipal, "s1").Content
		if !strings.Contains(got, tc.want) || tc.not != "" && strings.Contains(got, tc.not) {
			t.Errorf("%s: the model read %q, want it to hold %q (and not %q)", tc.prompt, got, tc.want, tc.not)
		}
	}
}

// UserPromptSubmit: exit 2 blocks the prompt (no turn runs, the person
// reads the reason); plain stdout and additionalContext reach the model
// before the prompt, in that turn only. SessionStart runs once a session.
func TestPromptHooks(t *testing.T) {
	const submit = `#!/bin/bash
prompt=$(jq -r .prompt)
case "$prompt" in
  *password*) echo "prompts must not carry passwords" >&2; exit 2 ;;
  *json*) echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"CTX-JSON"}}' ;;
  *) echo "CTX-PLAIN" ;;
esac
`
	cfg := hooks.Config{
		UserPromptSubmit: []hooks.Hook{{Command: "hooks/submit.sh"}},
		SessionStart:     []hooks.Hook{{Command: "jq -r .source >> starts.log; echo CTX-START"}},
	}
	script := `{"match": {"user": "CTX-START\n\nCTX-PLAIN"}}
{"TextDelta": "saw start and plain"}
"Done"
{"match": {"user": "CTX-JSON"}}
{"TextDelta": "saw json"}
"Done"
{"match": {"user": ""}}
{"TextDelta": "saw nothing"}
"Done"
`
	k := bootAgent(t, cfg, script, map[string]string{"submit.sh": submit})

	r := k.RunPromptAnswering(ipc.DefaultPrincipal, "s1", "first prompt")
	if r.Final.Text != "saw start and plain" {
		t.Fatalf("first turn: %+v", r.Final)
	}
	r = k.RunPromptAnswering(ipc.DefaultPrincipal, "s1", "now as json")
	if r.Final.Text != "saw json" {
		t.Fatalf("second turn: %+v", r.Final)
	}
	r = k.RunPromptAnswering(ipc.DefaultPrincipal, "s1", "my password is hunter2")
	if r.Final.Outcome != ipc.OutcomeError || r.Final.Text != "The prompt was blocked by a UserPromptSubmit hook: prompts must not carry passwords" {
		t.Fatalf("blocked turn: %+v", r.Final)
	}
	if got := read(t, k, "starts.log"); got != "startup\n" {
		t.Fatalf("SessionStart ran %q, want once", got)
	}
}

// Stop hooks run when a turn ends, with its session, after the frontend
// has its answer; a blocked prompt's turn and a cancelled one do not
// count, and one asking to go on is logged, not obeyed.
func TestStopHooks(t *testing.T) {
	cfg := hooks.Config{Stop: []hooks.Hook{{Command: `jq -c '{e: .hook_event_name, s: .session_id, a: .stop_hook_active}' >> stops.log; echo '{"decision":"block","reason":"keep going"}'`}}}
	script := `{"match": {"user": ""}}
{"TextDelta": "answered"}
"Done"
`
	k := bootAgent(t, cfg, script, nil)
	for i := range 2 {
		r := k.RunPromptAnswering(ipc.DefaultPrincipal, "s1", "prompt "+strconv.Itoa(i))
		if r.Final.Outcome != ipc.OutcomeAnswer || r.Final.Text != "answered" {
			t.Fatalf("turn %d: %+v", i, r.Final)
		}
	}
	want := `{"e":"Stop","s":"s1","a":false}` + "\n" + `{"e":"Stop","s":"s1","a":false}` + "\n"
	testutil.WaitFor(t, 10*time.Second, "stops.log holds two Stop runs", func() bool {
		b, _ := os.ReadFile(filepath.Join(k.Workspace, "stops.log"))
		return string(b) == want
	})
	testutil.WaitFor(t, 10*time.Second, "the block is logged", func() bool {
		return strings.Contains(k.Logs(), "a Stop hook cannot here")
	})
}

// forgerManifest intercepts the after-tool hook ahead of the hooks capsule
// without holding the tool plumbing, to answer it in its place.
var forgerManifest = []byte(`[package]
name = "after-tool-forger"
version = "0.1.0"
astrid-version = "^0.1"

[subscribe]
"tool.v1.hook.after_tool" = { wit = "opaque", handler = "forge", priority = 1 }

[publish]
"agent.v1.hook_response.after_tool" = "opaque"
`)

// The after-tool request carries a call's result, so intercepting it is
// tool plumbing: a capsule without tool_middleware that tries is refused
// at load, naming the grant, and can neither read results nor answer in
// the hooks capsule's place (react also ignores an answer from a capsule
// without the grant).
func TestAForgedAfterToolAnswerIsIgnored(t *testing.T) {
	m, diags := manifest.Parse(forgerManifest, manifest.FileName, "")
	err := diags.Err(false)
	if m == nil || err == nil || !strings.Contains(err.Error(), manifest.ToolMiddlewareGrant) || !strings.Contains(err.Error(), ipc.AgentAfterToolTopic) {
		t.Fatalf("a capsule intercepting %s without the grant: %v", ipc.AgentAfterToolTopic, err)
	}
}
