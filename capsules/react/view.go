package react

import (
	"fmt"
	"unicode/utf8"

	"github.com/astrid-go/astrid/ipc"
)

// storedCompaction is the session store's compaction record
// (capsules/session): Summary stands for the first Upto stored messages.
type storedCompaction struct {
	Summary string `json:"summary"`
	Upto    int    `json:"upto"`
}

// summaryMessage is the message that carries a compaction's summary in
// what the model is sent.
func summaryMessage(comp storedCompaction) ipc.Message {
	return ipc.TextMessage(ipc.RoleUser, fmt.Sprintf(
		"[Summary of the first %d messages of this conversation, which are left out here; the session keeps them]\n%s", comp.Upto, comp.Summary))
}

// view is what the model is sent of history: with a compaction, its
// summary in place of the messages it covers; and every tool result of an
// earlier round longer than maxResult bytes cut to its head and tail
// (the trailing run of tool results, the round the model is about to
// read, is whole). It notes on t where the view starts in the stored
// history (t.Upto, t.Summarized), which a later compaction builds on.
func view(t *turn, history []ipc.Message, comp *storedCompaction, maxResult int) []ipc.Message {
	t.Upto, t.Summarized = 0, false
	msgs := history
	if comp != nil && comp.Upto >= 1 && comp.Upto <= len(history) {
		t.Upto, t.Summarized = comp.Upto, true
		msgs = make([]ipc.Message, 0, len(history)-comp.Upto+1)
		msgs = append(msgs, summaryMessage(*comp))
		msgs = append(msgs, history[comp.Upto:]...)
	}
	trailing := len(msgs)
	for trailing > 0 && msgs[trailing-1].Role == ipc.RoleTool {
		trailing--
	}
	copied := false
	for i := 0; i < trailing; i++ {
		m := msgs[i]
		if m.Content.Kind != ipc.ContentToolResult || len(m.Content.ToolResult.Content) <= maxResult {
			continue
		}
		if !copied && !t.Summarized {
			msgs = append([]ipc.Message(nil), msgs...)
		}
		copied = true
		m.Content.ToolResult.Content = cutMiddle(m.Content.ToolResult.Content, maxResult)
		msgs[i] = m
	}
	return msgs
}

// cutMiddle keeps about two thirds of max bytes from s's head and one
// third from its tail, on rune boundaries, with a note between them.
func cutMiddle(s string, max int) string {
	if len(s) <= max {
		return s
	}
	head, tail := max*2/3, max/3
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	from := len(s) - tail
	for from < len(s) && !utf8.RuneStart(s[from]) {
		from++
	}
	return s[:head] + fmt.Sprintf("\n[… %d bytes of this tool result are left out here (the session keeps all of it) …]\n", from-head) + s[from:]
}

// storedIndex is the stored-history index of view position i.
func (t *turn) storedIndex(i int) int {
	if t.Summarized {
		return t.Upto + i - 1
	}
	return i
}
