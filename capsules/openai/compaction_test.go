package openai_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/astrid-go/astrid/capsules/openai"
	"github.com/astrid-go/astrid/capsules/promptbuilder"
	"github.com/astrid-go/astrid/capsules/react"
	"github.com/astrid-go/astrid/capsules/registry"
	"github.com/astrid-go/astrid/capsules/session"
	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// limitServer is an OpenAI-compatible model with a context limit: a chat
// request whose body is over limit tokens (four bytes a token, the
// agent's own estimate) is refused as OpenAI refuses one
// (context_length_exceeded). A summary request (the agent's compaction
// instruction in its system prompt) is answered with every "code word"
// fact the request holds, as a model that summarizes faithfully would;
// any other request with "ok". The summary answer is how the facts of
// early turns survive; the refusal is what makes compaction necessary.
type limitServer struct {
	*httptest.Server
	limit int
	// summary, when set, replaces the summary answer (a model that
	// misbehaves).
	summary func() (status int, text string)

	mu        sync.Mutex
	bodies    []string
	refused   int
	summaries int
}

var factRE = regexp.MustCompile(`code word of turn \d+ is [a-z]+-\d+`)

func newLimitServer(t testing.TB, limit int) *limitServer {
	s := &limitServer{limit: limit}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		s.mu.Lock()
		s.bodies = append(s.bodies, string(body))
		over := len(body)/4 > s.limit
		if over {
			s.refused++
		}
		summary := strings.Contains(string(body), "You write the summary")
		if summary {
			s.summaries++
		}
		s.mu.Unlock()
		if over {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":{"message":"This model's maximum context length is %d tokens. However, your messages resulted in %d tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, s.limit, len(body)/4)
			return
		}
		text := "ok"
		if summary {
			// Unescaped: the transcript is a JSON string in the body.
			var req struct {
				Messages []struct {
					Content string `json:"content"`
				} `json:"messages"`
			}
			_ = json.Unmarshal(body, &req)
			var all strings.Builder
			for _, m := range req.Messages {
				all.WriteString(m.Content)
			}
			facts := factRE.FindAllString(all.String(), -1)
			text = "The user stated: " + strings.Join(dedupe(facts), "; ") + "."
			if s.summary != nil {
				var status int
				if status, text = s.summary(); status != 0 {
					w.WriteHeader(status)
					return
				}
			}
		}
		delta, _ := json.Marshal(map[string]string{"content": text})
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, sse(`{"role":"assistant","content":""}`, "null", string(delta), "null", `{}`, `"stop"`)+"data: [DONE]\n\n")
	}))
	t.Cleanup(s.Close)
	return s
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func (s *limitServer) last() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bodies[len(s.bodies)-1]
}

// bootLimited is the agent (react, prompt builder, session store,
// registry) on this provider at srv, whose model has a window of window
// tokens (the provider's [env] context_window, as the registry reports it).
func bootLimited(t testing.TB, srv *limitServer, window int) *sdktest.Kernel {
	return sdktest.NewAgent(t, sdktest.AgentOptions{},
		sdktest.Capsule{Manifest: react.Manifest, New: react.New},
		sdktest.Capsule{Manifest: promptbuilder.Manifest, New: promptbuilder.New},
		sdktest.Capsule{Manifest: session.Manifest, New: session.New},
		sdktest.Capsule{Manifest: registry.Manifest, New: registry.New},
		sdktest.Capsule{Manifest: openai.Manifest, New: openai.New, Config: map[string]string{
			"base_url": srv.URL + "/v1", "model": "small", "context_window": fmt.Sprint(window)}},
	)
}

func codeWord(i int) string {
	return fmt.Sprintf("%s-%d", []string{"amber", "birch", "cobalt", "dune", "ember"}[i%5], i*7919%10007)
}

// filler makes each prompt weigh about 400 bytes, so that 300 turns are
// many windows' worth.
const filler = " Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat."

// A 300-turn session against a model whose server refuses any request
// over its 8000-token window: every turn is answered (none refused, so
// none went out over the limit), compactions happened and were announced,
// the session store still holds all 600 messages, and the last question,
// about turn 5, goes out with turn 5's code word in it (from the summary:
// turn 5's own messages are long gone from what is sent).
func TestLongSessionCompactsAndRemembers(t *testing.T) {
	const turns, window = 300, 8000
	srv := newLimitServer(t, window)
	k := bootLimited(t, srv, window)
	compactions := 0
	for i := 1; i <= turns; i++ {
		r := k.RunPrompt(ipc.DefaultPrincipal, "long", fmt.Sprintf("Turn %d: remember that the code word of turn %d is %s.%s", i, i, codeWord(i), filler), ipc.PromptContext{})
		if r.Final.Outcome != ipc.OutcomeAnswer {
			t.Fatalf("turn %d: %+v", i, r.Final)
		}
		for _, ev := range r.Events {
			if ev.Kind == agentclient.EventCompacted {
				c := ev.Compacted
				if !c.OK || c.Window != window || c.TokensAfter >= c.TokensBefore || c.Messages < 2 {
					t.Fatalf("turn %d: compaction %+v", i, c)
				}
				compactions++
			}
		}
	}
	r := k.RunPrompt(ipc.DefaultPrincipal, "long", "What was the code word of turn 5?", ipc.PromptContext{})
	if r.Final.Outcome != ipc.OutcomeAnswer {
		t.Fatalf("question: %+v", r.Final)
	}
	body := srv.last()
	if !strings.Contains(body, "code word of turn 5 is "+codeWord(5)) {
		t.Fatalf("the question went out without turn 5's code word: %.2000s", body)
	}
	if strings.Contains(body, "Turn 5: remember") {
		t.Fatalf("turn 5's own message is still sent: no compaction reached it")
	}
	if srv.refused != 0 || compactions < 3 || srv.summaries != compactions {
		t.Fatalf("%d requests refused, %d compactions announced, %d summary requests", srv.refused, compactions, srv.summaries)
	}
	if n := len(sessionMessages(t, k, "long")); n != 2*turns+2 {
		t.Fatalf("the session store holds %d messages, want all %d", n, 2*turns+2)
	}
	t.Logf("%d turns, %d compactions, last request %d bytes", turns, compactions, len(body))
}

func sessionMessages(t testing.TB, k *sdktest.Kernel, id string) []ipc.Message {
	corr := "h" + id
	body := k.SessionAsk(ipc.DefaultPrincipal, session.GetMessagesTopic, map[string]string{"session_id": id, "correlation_id": corr}, session.ReplyTopic(session.OpGetMessages, corr))
	var reply session.MessagesReply
	if err := json.Unmarshal(body, &reply); err != nil {
		t.Fatalf("history: %s (%v)", body, err)
	}
	return reply.Messages
}

// A summary that fails (the model answers nothing, or its server errs)
// compacts nothing: the turn goes on with the history sent whole (its
// first turn still in the request), the failure is announced with its
// reason, and the store keeps every message.
func TestFailedCompactionSendsTheHistoryWhole(t *testing.T) {
	for _, tc := range []struct {
		name    string
		summary func() (int, string)
		reason  string
	}{
		{"empty summary", func() (int, string) { return 0, "  " }, "empty summary"},
		{"server error", func() (int, string) { return http.StatusInternalServerError, "" }, "failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newLimitServer(t, 100000)
			srv.summary = tc.summary
			k := bootLimited(t, srv, 2000)
			var failed *ipc.AgentCompacted
			turns := 0
			for turns = 1; turns <= 40 && failed == nil; turns++ {
				r := k.RunPrompt(ipc.DefaultPrincipal, "f", fmt.Sprintf("Turn %d: remember that the code word of turn %d is %s.%s", turns, turns, codeWord(turns), filler), ipc.PromptContext{})
				if r.Final.Outcome != ipc.OutcomeAnswer {
					t.Fatalf("turn %d: %+v", turns, r.Final)
				}
				for _, ev := range r.Events {
					if ev.Kind == agentclient.EventCompacted {
						c := ev.Compacted
						failed = &c
					}
				}
			}
			if failed == nil || failed.OK || !strings.Contains(failed.Reason, tc.reason) {
				t.Fatalf("after %d turns: compaction event %+v, want a failure naming %q", turns, failed, tc.reason)
			}
			if body := srv.last(); !strings.Contains(body, "Turn 1: remember") {
				t.Fatalf("the request after the failed compaction lost the first turn: %.500s", body)
			}
			if n := len(sessionMessages(t, k, "f")); n != 2*(turns-1) {
				t.Fatalf("the store holds %d messages after %d turns", n, turns-1)
			}
		})
	}
}

// The context window a server's model list states (vLLM's max_model_len,
// llama.cpp's meta.n_ctx_train, OpenRouter's context_length) is what
// describe reports for that model, so the registry and the agent's
// compaction threshold know it; a model the list gives none for keeps the
// configured default; the operator's [env] context_window wins over the
// list.
func TestModelListContextWindows(t *testing.T) {
	const list = `{"object":"list","data":[` +
		`{"id":"Qwen/Qwen2.5-7B-Instruct","object":"model","created":1,"owned_by":"vllm","max_model_len":32768},` +
		`{"id":"gguf-model","object":"model","created":1,"owned_by":"llamacpp","meta":{"n_ctx_train":8192}},` +
		`{"id":"router/model","object":"model","created":1,"owned_by":"x","context_length":1000000},` +
		`{"id":"plain","object":"model","created":1,"owned_by":"x"},` +
		`{"id":"absurd","object":"model","created":1,"owned_by":"x","max_model_len":99999999999999}]}`
	srv, _, _ := modelsServer(t, http.StatusOK, list)
	windows := func(cfg map[string]string) map[string]uint64 {
		t.Helper()
		k := sdktest.New(t, sdktest.Capsule{Manifest: openai.Manifest, New: openai.New, Config: cfg})
		var d struct{ Providers []describeEntry }
		if err := json.Unmarshal(k.DescribeLLMWith([]byte(`{"refresh":true}`)), &d); err != nil {
			t.Fatal(err)
		}
		out := map[string]uint64{}
		for _, e := range d.Providers {
			out[e.ID] = e.ContextWindow
		}
		return out
	}
	got := windows(map[string]string{"base_url": srv.URL + "/v1"})
	want := map[string]uint64{"Qwen/Qwen2.5-7B-Instruct": 32768, "gguf-model": 8192, "router/model": 1000000, "plain": 128000, "absurd": 128000}
	for id, w := range want {
		if got[id] != w {
			t.Fatalf("windows %v, want %v", got, want)
		}
	}
	if got := windows(map[string]string{"base_url": srv.URL + "/v1", "context_window": "4096"}); got["Qwen/Qwen2.5-7B-Instruct"] != 4096 {
		t.Fatalf("with [env] context_window 4096: %v", got)
	}
}
