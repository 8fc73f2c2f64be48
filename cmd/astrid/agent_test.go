package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/testutil"
)

// offeredTools is the tool names of an OpenAI Chat Completions request body.
func offeredTools(t *testing.T, body string) []string {
	t.Helper()
	var req struct {
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatalf("request body: %v: %s", err, body)
	}
	var out []string
	for _, tl := range req.Tools {
		out = append(out, tl.Function.Name)
	}
	return out
}

// A read-only agent's turn on a fake OpenAI-compatible provider is offered
// no mutable tool (asserted on the request body the provider receives),
// while the default principal's is; and when the model calls a mutable
// tool anyway, the approval layer refuses it, naming the limit, and the
// file is not written.
func TestReadOnlyAgentIsOfferedNoMutableTool(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	callWrite := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		first := callWrite && !strings.Contains(string(b), `"role":"tool"`)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if first {
			io.WriteString(w, openAIChunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_w","type":"function","function":{"name":"write_file","arguments":"{\"file_path\":\"x.txt\",\"content\":\"x\"}"}}]}`, "null"))
			io.WriteString(w, openAIChunk(`{}`, `"tool_calls"`))
		} else {
			io.WriteString(w, openAIChunk(`{"role":"assistant","content":"done"}`, "null"))
			io.WriteString(w, openAIChunk(`{}`, `"stop"`))
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()

	home, ws := t.TempDir(), t.TempDir()
	run := func(args ...string) (string, string, error) {
		cmd := astridProcess(home, args...)
		cmd.Env = append(cmd.Env, "OPENAI_BASE_URL="+srv.URL+"/v1", "OPENAI_API_KEY=")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	if out, errOut, err := run("agent", "create", "reader", "--read-only"); err != nil || !strings.Contains(out, "created agent reader: capsules: all; read-only") {
		t.Fatalf("agent create: %v: %s %s", err, out, errOut)
	}
	if out, _, err := run("agent", "list"); err != nil || !strings.Contains(out, "reader") {
		t.Fatalf("agent list: %v: %s", err, out)
	}
	turn := func(principal string) []string {
		t.Helper()
		mu.Lock()
		bodies = nil
		mu.Unlock()
		out, errOut, err := run("-p", "hello", "--provider", "openai", "--model", "test-model", "--workspace", ws, "--principal", principal, "--no-daemon")
		if err != nil || out != "done\n" {
			t.Fatalf("turn as %s: %v: stdout %q, stderr:\n%s", principal, err, out, errOut)
		}
		mu.Lock()
		defer mu.Unlock()
		return offeredTools(t, bodies[0])
	}
	all := turn("default")
	mutable := []string{"write_file", "replace_in_file", "create_directory", "delete_file", "move_file", "run_shell_command", "spawn_background_process", "kill_process"}
	for _, m := range append(mutable, "read_file") {
		if !slices.Contains(all, m) {
			t.Fatalf("default was not offered %s: %v", m, all)
		}
	}
	ro := turn("reader")
	if !slices.Contains(ro, "read_file") || !slices.Contains(ro, "list_directory") {
		t.Fatalf("the read-only agent was not offered the read-only tools: %v", ro)
	}
	for _, m := range mutable {
		if slices.Contains(ro, m) {
			t.Fatalf("the read-only agent was offered %s: %v", m, ro)
		}
	}

	// The model calls write_file anyway: refused with the limit named.
	mu.Lock()
	callWrite = true
	mu.Unlock()
	_, errOut, _ := run("-p", "write", "--provider", "openai", "--model", "test-model", "--workspace", ws, "--principal", "reader", "--no-daemon", "--yes")
	if !strings.Contains(errOut, "write_file was not run: it changes things and agent reader is read-only") {
		t.Fatalf("a mutable call of the read-only agent: %s", errOut)
	}
	if _, err := os.Stat(filepath.Join(ws, "x.txt")); !os.IsNotExist(err) {
		t.Fatalf("the read-only agent wrote x.txt: %v", err)
	}

	for _, bad := range []string{"../etc", "a/b", "default", "-x", ""} {
		if _, errOut, err := run("agent", "create", "--", bad); exitStatus(t, err) != 2 || !strings.Contains(errOut, "invalid agent") {
			t.Errorf("agent create %q: %v: %s", bad, err, errOut)
		}
	}
	// Removing an agent deletes its data (its turns' sessions, a key of
	// its own, its home:// files) once confirmed; with --keep-data,
	// another's stays.
	if out, errOut, err := run("agent", "create", "keeper"); err != nil {
		t.Fatalf("agent create keeper: %v: %s %s", err, out, errOut)
	}
	setKey := func(principal string) {
		st, err := openStore(home)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if err := st.KV(principal, "astrid-capsule-memory").Set("note", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	hasKey := func(principal string) bool {
		st, err := openStore(home)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		_, ok, err := st.KV(principal, "astrid-capsule-memory").Get("note")
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	setKey("reader")
	setKey("keeper")
	homeFile := filepath.Join(config.Layout(home).Principals, "reader", "notes.txt")
	if err := os.MkdirAll(filepath.Dir(homeFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(homeFile, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A "y" piped in is no confirmation: nobody is at a terminal.
	piped := astridProcess(home, "agent", "remove", "reader")
	piped.Stdin = strings.NewReader("y\n")
	if b, err := piped.CombinedOutput(); exitStatus(t, err) != 1 || !strings.Contains(string(b), "--yes to delete it, or --keep-data") || !hasKey("reader") {
		t.Fatalf("agent remove with nobody to confirm: %v: %s", err, b)
	}
	out, errOut, err := run("agent", "remove", "reader", "--yes")
	if err != nil || !strings.Contains(out, "removed agent reader and its data") || strings.Contains(out, "what 1 capsule kept") {
		t.Fatalf("agent remove --yes (its sessions and the key, at least two capsules' stores): %v: %s %s", err, out, errOut)
	}
	if _, err := os.Stat(homeFile); !os.IsNotExist(err) || hasKey("reader") {
		t.Fatalf("reader's data survived its removal: home file %v, key %v", err, hasKey("reader"))
	}
	if out, errOut, err := run("agent", "remove", "keeper", "--keep-data"); err != nil || !strings.Contains(out, "its data is kept") || !hasKey("keeper") {
		t.Fatalf("agent remove --keep-data: %v: %s %s", err, out, errOut)
	}
	if _, errOut, err := run("agent", "remove", "reader"); exitStatus(t, err) != 1 || !strings.Contains(errOut, "no agent reader") {
		t.Fatalf("agent remove twice: %v: %s", err, errOut)
	}
}

// An agent's LLM tokens per day: its first turn (50 tokens, over its 30)
// runs, and the next is refused before the model is asked, naming the
// limit; the default principal is not limited.
func TestTokensPerDayExhaustedIsRefusedWithTheLimitNamed(t *testing.T) {
	var mu sync.Mutex
	requests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		mu.Lock()
		requests++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, openAIChunk(`{"role":"assistant","content":"done"}`, "null"))
		io.WriteString(w, openAIChunk(`{}`, `"stop"`))
		io.WriteString(w, `data: {"id":"chatcmpl-Cli1","object":"chat.completion.chunk","created":1764590000,"model":"test-model","choices":[],"usage":{"prompt_tokens":40,"completion_tokens":10,"total_tokens":50}}`+"\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	home, ws := t.TempDir(), t.TempDir()
	run := func(args ...string) (string, string, error) {
		cmd := astridProcess(home, args...)
		cmd.Env = append(cmd.Env, "OPENAI_BASE_URL="+srv.URL+"/v1", "OPENAI_API_KEY=")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	if out, errOut, err := run("agent", "create", "bot", "--tokens-per-day", "30"); err != nil || !strings.Contains(out, "30 tokens/day") {
		t.Fatalf("agent create: %v: %s %s", err, out, errOut)
	}
	turn := func(principal string) (string, string, error) {
		return run("-p", "hello", "--provider", "openai", "--model", "test-model", "--workspace", ws, "--principal", principal, "--no-daemon")
	}
	if out, errOut, err := turn("bot"); err != nil || out != "done\n" {
		t.Fatalf("first turn: %v: %q %s", err, out, errOut)
	}
	out, errOut, err := turn("bot")
	if err == nil || !strings.Contains(errOut+out, "agent bot has used 50 LLM tokens today, its limit (tokens_per_day 30)") {
		t.Fatalf("second turn over the limit: %v: %q %s", err, out, errOut)
	}
	mu.Lock()
	if requests != 1 {
		t.Fatalf("the provider was asked %d times, want once", requests)
	}
	mu.Unlock()
	// The refusal is in bot's audit chain, naming the limit.
	out, errOut, err = run("audit", "show", "--principal", "bot", "--json")
	if err != nil || !strings.Contains(out, `"kind":"quota.refused"`) || !strings.Contains(out, `"subject":"tokens_per_day"`) ||
		!strings.Contains(out, `"limit":"30"`) || !strings.Contains(out, `"used":"50"`) {
		t.Fatalf("bot's chain after the refusal: %v: %s %s", err, out, errOut)
	}
	if out, errOut, err := turn("default"); err != nil || out != "done\n" {
		t.Fatalf("default is limited too: %v: %q %s", err, out, errOut)
	}
}

// Which principal a socket client may act as comes from config.toml: a uid
// listed for two principals may pick either with --principal (the daemon
// serves it as that principal), and no other; the first is its default.
func TestPrincipalOverTheSocketIsBoundedByConfig(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	cfg := fmt.Sprintf("[uplink]\nprincipals = [\"%d=default\", \"%d=reader\"]\n", os.Getuid(), os.Getuid())
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	startDaemonIn(t, home, ws)
	t.Cleanup(func() { runClient(t, home, ws, nil, "stop") })
	testutil.WaitFor(t, daemonPatience, "the uplink to accept a client", func() bool {
		c, err := dialDaemonFor(context.Background(), home, ws, nil)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	if r := runClient(t, home, ws, nil, "caps", "grant", "--principal", "reader", "--capsule", "astrid-capsule-fs", "--tool", "write_file"); r.code != 0 {
		t.Fatalf("grant: exit %d: %s", r.code, r.stderr)
	}
	if l := capsOf(t, home, ws, "--principal", "reader"); len(l) != 1 || l[0].Tool != "write_file" {
		t.Fatalf("through the daemon as reader: %+v", l)
	}
	if l := capsOf(t, home, ws); len(l) != 0 {
		t.Fatalf("through the daemon as the default: %+v", l)
	}
	r := runClient(t, home, ws, nil, "caps", "list", "--principal", "bob")
	if r.code != 2 || !strings.Contains(r.stderr, `serves you as principal "default", not "bob"`) || !strings.Contains(r.stderr, "act as: default, reader") {
		t.Fatalf("--principal bob: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
}
