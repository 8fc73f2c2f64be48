package react

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/ipc"
)

// benchHistory is a session of n messages: prompts, tool rounds with
// results of 2 KiB, answers.
func benchHistory(n int) []ipc.Message {
	out := make([]ipc.Message, 0, n)
	for i := 0; len(out) < n; i++ {
		out = append(out, ipc.TextMessage(ipc.RoleUser, fmt.Sprintf("question %d about the project", i)),
			ipc.Message{Role: ipc.RoleAssistant, Content: ipc.MessageContent{Kind: ipc.ContentToolCalls, ToolCalls: []ipc.ToolCall{{ID: fmt.Sprint("c", i), Name: "read_file", Arguments: json.RawMessage(`{"file_path":"README.md"}`)}}}},
			ipc.Message{Role: ipc.RoleTool, Content: ipc.MessageContent{Kind: ipc.ContentToolResult, ToolResult: ipc.ToolCallResult{CallID: fmt.Sprint("c", i), Content: strings.Repeat("x", 2048)}}},
			ipc.TextMessage(ipc.RoleAssistant, "the answer"))
	}
	return out[:n]
}

// What context management adds to a model request below the threshold:
// the view of the history (a scan for tool results to cut, nothing
// copied) and one comparison of the request's size, which is marshalled
// anyway. Compared with marshalling the request itself, which every
// request pays with or without it.
func BenchmarkCompactionBelowThreshold(b *testing.B) {
	for _, n := range []int{20, 200} {
		history := benchHistory(n)
		t := &turn{Budget: DefaultContextWindow / 100 * defaultCompactPct, ToolResultMax: defaultToolResultMax}
		b.Run(fmt.Sprintf("added/%d-messages", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				msgs := view(t, history, nil, t.ToolResultMax)
				if len(msgs) != n || estimateTokens(1<<20) > 1<<30 {
					b.Fatal("view changed the history")
				}
			}
		})
		b.Run(fmt.Sprintf("request-marshal/%d-messages", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := (ipc.LLMRequest{RequestID: "r", Messages: history}).MarshalJSON(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
