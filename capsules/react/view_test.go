package react

import (
	"strings"
	"testing"

	"github.com/astrid-go/astrid/ipc"
)

func toolRound(id, result string) []ipc.Message {
	return []ipc.Message{
		{Role: ipc.RoleAssistant, Content: ipc.MessageContent{Kind: ipc.ContentToolCalls, ToolCalls: []ipc.ToolCall{{ID: id, Name: "read_file"}}}},
		{Role: ipc.RoleTool, Content: ipc.MessageContent{Kind: ipc.ContentToolResult, ToolResult: ipc.ToolCallResult{CallID: id, Content: result}}},
	}
}

// What the model is sent of a history: an earlier round's large tool
// result cut to head and tail with a note (the stored one untouched), the
// round it is about to read whole; with a compaction, the summary in
// place of the messages it covers.
func TestView(t *testing.T) {
	big := "HEAD" + strings.Repeat("x", 100<<10) + "TAIL"
	history := append([]ipc.Message{ipc.TextMessage(ipc.RoleUser, "read it")}, toolRound("c1", big)...)
	history = append(history, ipc.TextMessage(ipc.RoleAssistant, "done"), ipc.TextMessage(ipc.RoleUser, "again"))
	history = append(history, toolRound("c2", big)...)
	tr := &turn{}
	msgs := view(tr, history, nil, 1024)
	cut := msgs[2].Content.ToolResult.Content
	if len(cut) > 1200 || !strings.HasPrefix(cut, "HEAD") || !strings.HasSuffix(cut, "TAIL") || !strings.Contains(cut, "bytes of this tool result are left out here (the session keeps all of it)") {
		t.Fatalf("the earlier result as sent: %d bytes %.120q…", len(cut), cut)
	}
	if msgs[6].Content.ToolResult.Content != big || history[2].Content.ToolResult.Content != big {
		t.Fatal("the current round's result, or the stored history, was cut")
	}
	if tr.Summarized || tr.Upto != 0 {
		t.Fatalf("no compaction, yet %+v", tr)
	}
	msgs = view(tr, history, &storedCompaction{Summary: "They read a file.", Upto: 4}, 1<<20)
	if len(msgs) != len(history)-4+1 || !strings.Contains(msgs[0].Content.Text, "They read a file.") || !tr.Summarized || tr.Upto != 4 || tr.storedIndex(1) != 4 {
		t.Fatalf("compacted view %+v, turn %+v", msgs, tr)
	}
	// A compaction that no longer fits the history is ignored.
	if msgs = view(tr, history, &storedCompaction{Summary: "x", Upto: 99}, 1<<20); len(msgs) != len(history) || tr.Summarized {
		t.Fatal("a compaction past the history was applied")
	}
}

// The history is never cut between a call and its result, and the
// newest messages within the keep share stay; forced, everything before
// the last user message goes.
func TestSplitPoint(t *testing.T) {
	history := []ipc.Message{ipc.TextMessage(ipc.RoleUser, strings.Repeat("a", 4000))}
	history = append(history, toolRound("c1", strings.Repeat("r", 4000))...)
	history = append(history, ipc.TextMessage(ipc.RoleAssistant, "answer"), ipc.TextMessage(ipc.RoleUser, "short question"))
	history = append(history, toolRound("c2", "small")...)
	tr := &turn{Budget: 2000} // keep ≈ 600 tokens ≈ 2400 bytes
	i := splitPoint(tr, history, false)
	if i == 0 || history[i].Role == ipc.RoleTool || i > 4 {
		t.Fatalf("split at %d (%s)", i, history[i].Role)
	}
	if f := splitPoint(tr, history, true); f != 4 {
		t.Fatalf("forced split at %d, want the last user message (4)", f)
	}
	if splitPoint(tr, history[:1], true) != 0 || splitPoint(tr, history[:1], false) != 0 {
		t.Fatal("one message can not be compacted")
	}
	tr.Summarized = true // message 0 is a summary: compacting it alone gains nothing
	if f := splitPoint(tr, append([]ipc.Message{ipc.TextMessage(ipc.RoleUser, "summary")}, ipc.TextMessage(ipc.RoleUser, "q")), true); f != 0 {
		t.Fatalf("re-compacting only the summary: split %d", f)
	}
}

// The operator's window table: entries that are not a model id or a
// size from 1024 tokens up are named and left out, the rest taken.
func TestParseWindows(t *testing.T) {
	table, problems := parseWindows("openai:gpt-x=400000; anthropic:claude=200000\nbad=5,openai:tiny=12, local:m=abc ,x:y")
	if len(table) != 2 || table["openai:gpt-x"] != 400000 || table["anthropic:claude"] != 200000 {
		t.Fatalf("table %v", table)
	}
	if len(problems) != 4 || !strings.Contains(strings.Join(problems, "|"), `"openai:tiny=12": want <tokens from 1024`) {
		t.Fatalf("problems %q", problems)
	}
}
