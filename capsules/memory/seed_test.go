package memory

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/sdk/sdktest"
)

// seeded is n notes of principal as remember would have left them in KV
// (note, and postings when indexed), each about one of a few topics, so that a test or
// benchmark starts from a full memory without n tool calls.
func seeded(principal string, n int, indexed bool) map[string]map[string]string {
	topics := []string{"database migrations postgres", "frontend react components", "deploy cluster kubernetes", "billing invoices stripe", "oncall pager rotation"}
	kv := map[string]string{}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		created := base.Add(time.Duration(i) * time.Second)
		id := fmt.Sprintf("%013s", fmt.Sprint(created.UnixNano()))
		text := fmt.Sprintf("Note %d about %s: detail %d of the %s work.", i, topics[i%len(topics)], i, strings.Fields(topics[i%len(topics)])[0])
		raw, _ := json.Marshal(Note{ID: id, Text: text, Created: created})
		kv[noteKey(id)] = string(raw)
		if !indexed {
			continue
		}
		for term, count := range terms(text) {
			kv[postingKey(term, id, count)] = "1"
		}
	}
	return map[string]map[string]string{principal: kv}
}

func bootSeeded(t testing.TB, n int, indexed bool) *sdktest.Kernel {
	return sdktest.New(t, sdktest.Capsule{Manifest: Manifest, New: New, KV: seeded("alice", n, indexed)})
}

// A principal's memory is bounded: at MaxNotes, remember refuses, saying
// how to make room; forgetting one makes room for one.
func TestTheNoteCapHolds(t *testing.T) {
	k := bootSeeded(t, MaxNotes, false)
	res := k.CallToolAs("alice", "remember", map[string]any{"text": "one more"})
	if !res.IsError || !strings.Contains(res.Content, "10000 notes are saved, the limit") {
		t.Fatalf("remember past the cap: %+v", res)
	}
	first := fmt.Sprintf("%013s", fmt.Sprint(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()))
	if res := k.CallToolAs("alice", "forget", map[string]any{"id": first}); res.IsError {
		t.Fatalf("forget in a full memory: %+v", res)
	}
	if res := k.CallToolAs("alice", "remember", map[string]any{"text": "one more"}); res.IsError {
		t.Fatalf("remember after forgetting one: %+v", res)
	}
}

// BenchmarkRecallFullMemory is one recall tool call over MaxNotes notes,
// through the kernel.
func BenchmarkRecallFullMemory(b *testing.B) {
	k := bootSeeded(b, MaxNotes, true)
	b.ResetTimer()
	for b.Loop() {
		if res := k.CallToolAs("alice", "recall", map[string]any{"query": "kubernetes cluster deploy", "limit": 5}); res.IsError {
			b.Fatal(res.Content)
		}
	}
}

// BenchmarkRecallHundredNotes is the same over 100 notes, a typical
// memory.
func BenchmarkRecallHundredNotes(b *testing.B) {
	k := bootSeeded(b, 100, true)
	b.ResetTimer()
	for b.Loop() {
		if res := k.CallToolAs("alice", "recall", map[string]any{"query": "kubernetes cluster deploy", "limit": 5}); res.IsError {
			b.Fatal(res.Content)
		}
	}
}
