package replay_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/capsules/promptbuilder"
	"github.com/astrid-go/astrid/capsules/react"
	"github.com/astrid-go/astrid/capsules/registry"
	"github.com/astrid-go/astrid/capsules/replay"
	"github.com/astrid-go/astrid/capsules/session"
	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

func codeWord(i int) string {
	return fmt.Sprintf("%s-%d", []string{"amber", "birch", "cobalt", "dune", "ember"}[i%5], i*7919%10007)
}

func prompt(i int) string {
	return fmt.Sprintf("Turn %d: remember that the code word of turn %d is %s.", i, i, codeWord(i))
}

const question = "What was the code word of turn 5?"

// longScript is a recorded 300-turn session whose model is a faithful
// summarizer of one fact only: turn 5's code word. Its turns, first
// match wins:
//   - the question about turn 5, judged on what the request sends: an
//     admission when turn 5's own message is still there (no compaction
//     reached it), the code word when the summary's wording of the fact is
//     there, "I do not know" otherwise;
//   - the summary request (react's "Write the summary now."): the fact in
//     the summary's wording when the transcript holds it, from turn 5's
//     message or from an earlier summary opening the transcript; a summary
//     without it otherwise, so a compaction that loses it loses it for good;
//   - each of the 300 prompts, acknowledged with its usage.
func longScript(turns int) string {
	var b strings.Builder
	line := func(v any) {
		raw, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		b.Write(raw)
		b.WriteByte('\n')
	}
	turn := func(match map[string]string, text string) {
		line(map[string]any{"match": match})
		line(map[string]string{"TextDelta": text})
		line(map[string]any{"Usage": map[string]int{"input_tokens": 1000, "output_tokens": len(text) / 4}})
		line("Done")
	}
	word := codeWord(5)
	summarized := "turn 5's code word was " + word
	turn(map[string]string{"user": question, "sent": "Turn 5: remember"}, "Turn 5's own message is still in the request.")
	turn(map[string]string{"user": question, "sent": summarized}, word)
	turn(map[string]string{"user": question}, "I do not know.")
	summary := "Earlier, the user said that " + summarized + "."
	turn(map[string]string{"user": "Write the summary now.", "sent": "code word of turn 5 is " + word}, summary)
	turn(map[string]string{"user": "Write the summary now.", "sent": summarized}, summary)
	turn(map[string]string{"user": "Write the summary now."}, "The user stated a code word in each turn.")
	for i := 1; i <= turns; i++ {
		turn(map[string]string{"user": fmt.Sprintf("Turn %d: remember", i)}, fmt.Sprintf("Noted, turn %d.", i))
	}
	return b.String()
}

// A replayed 300-turn session (the issue-34 Show item): the agent stack
// (react, prompt builder, session store, registry) on the replay provider
// playing a generated 300-turn script, with a 2000-token window it
// enforces as a model's server does. Every turn is answered (so no request
// went out over the window: the provider refuses those), compactions
// happened and were announced, the store keeps every message, and the
// question about turn 5 gets turn 5's code word: the script answers it
// only when the request sends the summary's wording of the fact, and
// admits it when turn 5's own message is still sent.
func TestReplayedLongSessionCompactsAndRemembers(t *testing.T) {
	const turns, window = 300, 2000
	k := sdktest.NewAgent(t, sdktest.AgentOptions{},
		sdktest.Capsule{Manifest: react.Manifest, New: react.New},
		sdktest.Capsule{Manifest: promptbuilder.Manifest, New: promptbuilder.New},
		sdktest.Capsule{Manifest: session.Manifest, New: session.New},
		sdktest.Capsule{Manifest: registry.Manifest, New: registry.New},
		sdktest.Capsule{Manifest: replay.Manifest, New: replay.New, Config: map[string]string{
			"script": "long.jsonl", "context_window": fmt.Sprint(window)}},
	)
	if err := os.WriteFile(filepath.Join(k.Workspace, "long.jsonl"), []byte(longScript(turns)), 0o600); err != nil {
		t.Fatal(err)
	}
	compactions := 0
	for i := 1; i <= turns; i++ {
		r := k.RunPrompt(ipc.DefaultPrincipal, "long", prompt(i), ipc.PromptContext{})
		if want := fmt.Sprintf("Noted, turn %d.", i); r.Final.Outcome != ipc.OutcomeAnswer || r.Text != want {
			t.Fatalf("turn %d: answer %q, want %q: %+v", i, r.Text, want, r.Final)
		}
		for _, ev := range r.Events {
			if ev.Kind != agentclient.EventCompacted {
				continue
			}
			c := ev.Compacted
			if !c.OK || c.Window != window || c.TokensAfter >= c.TokensBefore || c.Messages < 2 {
				t.Fatalf("turn %d: compaction %+v", i, c)
			}
			compactions++
		}
	}
	r := k.RunPrompt(ipc.DefaultPrincipal, "long", question, ipc.PromptContext{})
	if r.Final.Outcome != ipc.OutcomeAnswer || r.Text != codeWord(5) {
		t.Fatalf("the question about turn 5 was answered %q, want %q: %+v", r.Text, codeWord(5), r.Final)
	}
	if compactions < 3 {
		t.Fatalf("%d compactions announced over %d turns of a %d-token window", compactions, turns, window)
	}
	if n := len(sessionMessages(t, k, "long")); n != 2*turns+2 {
		t.Fatalf("the session store holds %d messages, want all %d", n, 2*turns+2)
	}
	t.Logf("%d turns, %d compactions", turns, compactions)
}

func sessionMessages(t testing.TB, k *sdktest.Kernel, id string) []ipc.Message {
	t.Helper()
	corr := "h" + id
	body := k.SessionAsk(ipc.DefaultPrincipal, session.GetMessagesTopic, map[string]string{"session_id": id, "correlation_id": corr}, session.ReplyTopic(session.OpGetMessages, corr))
	var reply session.MessagesReply
	if err := json.Unmarshal(body, &reply); err != nil {
		t.Fatalf("history: %s (%v)", body, err)
	}
	return reply.Messages
}
