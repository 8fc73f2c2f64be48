package memory_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/capsules/memory"
	"github.com/astrid-go/astrid/capsules/promptbuilder"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

func boot(t *testing.T) *sdktest.Kernel {
	t.Helper()
	sdktest.CheckRegistrations(t, memory.Manifest, memory.New())
	return sdktest.New(t, sdktest.Capsule{Manifest: memory.Manifest, New: memory.New},
		sdktest.Capsule{Manifest: promptbuilder.Manifest, New: promptbuilder.New})
}

func recalled(t *testing.T, k *sdktest.Kernel, principal, query string) []memory.Note {
	t.Helper()
	res := k.CallToolAs(principal, "recall", map[string]any{"query": query})
	if res.IsError {
		t.Fatalf("recall %q: %s", query, res.Content)
	}
	var notes []memory.Note
	if err := json.Unmarshal([]byte(res.Content), &notes); err != nil {
		t.Fatalf("recall answered %q: %v", res.Content, err)
	}
	return notes
}

func remember(t *testing.T, k *sdktest.Kernel, principal, text string) string {
	t.Helper()
	res := k.CallToolAs(principal, "remember", map[string]any{"text": text})
	if res.IsError || !strings.HasPrefix(res.Content, "Remembered as note ") {
		t.Fatalf("remember %q: %+v", text, res)
	}
	return strings.TrimSuffix(strings.TrimPrefix(res.Content, "Remembered as note "), ".")
}

// Notes are saved, found by their words (the most relevant first), kept
// apart per principal, and forgotten.
func TestRememberRecallForget(t *testing.T) {
	k := boot(t)
	deploy := remember(t, k, "alice", "The staging deploy uses the blue cluster; production deploys need Dana's sign-off.")
	remember(t, k, "alice", "Alice prefers tabs over spaces in Go code.")
	remember(t, k, "alice", "The blue cluster is in the Frankfurt region.")
	remember(t, k, "bob", "Bob's deploy notes: green cluster only.")

	got := recalled(t, k, "alice", "how do I deploy to production?")
	if len(got) == 0 || got[0].ID != deploy {
		t.Fatalf("recall of the deploy note: %+v, want note %s first", got, deploy)
	}
	for _, n := range got {
		if strings.Contains(n.Text, "Bob") {
			t.Fatalf("bob's note reached alice: %+v", got)
		}
	}
	if got := recalled(t, k, "alice", "Frankfurt"); len(got) != 1 || !strings.Contains(got[0].Text, "Frankfurt") {
		t.Fatalf("recall Frankfurt: %+v", got)
	}
	if got := recalled(t, k, "alice", "kubernetes"); len(got) != 0 {
		t.Fatalf("recall of a word no note has: %+v", got)
	}

	if res := k.CallToolAs("bob", "forget", map[string]any{"id": deploy}); !res.IsError {
		t.Fatalf("bob forgot alice's note: %+v", res)
	}
	if res := k.CallToolAs("alice", "forget", map[string]any{"id": deploy}); res.IsError {
		t.Fatalf("forget: %+v", res)
	}
	for _, n := range recalled(t, k, "alice", "deploy production sign-off") {
		if n.ID == deploy {
			t.Fatalf("a forgotten note is recalled: %+v", n)
		}
	}
}

func TestBadNotesAreRefused(t *testing.T) {
	k := boot(t)
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"remember", map[string]any{"text": "   "}, "the note is empty"},
		{"remember", map[string]any{"text": strings.Repeat("x", 100<<10)}, "over the 8192-byte limit"},
		{"recall", map[string]any{"query": ""}, "the query is empty"},
		{"forget", map[string]any{"id": "nope"}, "there is no note nope"},
		{"forget", map[string]any{"id": "memory.t.*"}, "is not a note id"},
	} {
		res := k.CallToolAs("alice", tc.tool, tc.args)
		if !res.IsError || !strings.Contains(res.Content, tc.want) {
			t.Errorf("%s %.40v: %.200q, want an error saying %q", tc.tool, tc.args, res.Content, tc.want)
		}
	}
}

// The prompt builder is offered the notes relevant to the person's latest
// message, as context the person could see; nothing when none is.
func TestRelevantNotesReachThePrompt(t *testing.T) {
	k := boot(t)
	remember(t, k, "alice", "The project's database is PostgreSQL 16 on port 5433.")
	remember(t, k, "alice", "Lunch is at noon on Fridays.")

	replies := k.PromptListen("alice", promptbuilder.ResponseTopic)
	ask := func(id, text string) string {
		t.Helper()
		k.PromptPublish("alice", map[string]any{"request_id": id, "messages": []ipc.Message{ipc.TextMessage(ipc.RoleUser, text)}, "system_prompt": "You help."})
		_, raw := replies.Next()
		var resp struct {
			RequestID         string `json:"request_id"`
			UserContextPrefix string `json:"user_context_prefix"`
			Error             string `json:"error"`
		}
		if err := json.Unmarshal(raw, &resp); err != nil || resp.RequestID != id || resp.Error != "" {
			t.Fatalf("assemble answered %s (%v)", raw, err)
		}
		return resp.UserContextPrefix
	}
	if got := ask("r1", "which port does the database listen on?"); !strings.Contains(got, "PostgreSQL 16 on port 5433") || strings.Contains(got, "Lunch") {
		t.Fatalf("context for a database question: %q", got)
	}
	if got := ask("r2", "write a haiku"); strings.Contains(got, "Notes you saved") {
		t.Fatalf("notes offered for an unrelated message: %q", got)
	}
	if l := k.Logs(); strings.Contains(l, "not a hook response") || strings.Contains(l, "did not answer") {
		t.Fatalf("the prompt builder did not take the memory's answers as answers:\n%s", l)
	}
}
