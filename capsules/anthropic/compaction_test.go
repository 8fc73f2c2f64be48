package anthropic_test

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

	"github.com/astrid-go/astrid/capsules/anthropic"
	"github.com/astrid-go/astrid/capsules/promptbuilder"
	"github.com/astrid-go/astrid/capsules/react"
	"github.com/astrid-go/astrid/capsules/registry"
	"github.com/astrid-go/astrid/capsules/session"
	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// textSSE is a Messages API stream answering text.
func textSSE(text string) string {
	t, _ := json.Marshal(text)
	return `event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-x","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":` + string(t) + `}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}

event: message_stop
data: {"type":"message_stop"}

`
}

var anthropicFactRE = regexp.MustCompile(`code word of turn \d+ is [a-z]+\d+`)

// The context management works on this provider too: against a Messages
// API that refuses a request over its 3000-token window ("prompt is too
// long", as Anthropic says it), 60 turns all get answers, compactions
// happen, and the question about turn 2 goes out with its code word (the
// summary, made by this model, carried it).
func TestCompactionOnTheMessagesAPI(t *testing.T) {
	const window = 3000
	var mu sync.Mutex
	var last string
	refused, summaries := 0, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		last = string(body)
		over := len(body)/4 > window
		if over {
			refused++
		}
		summary := strings.Contains(string(body), "You write the summary")
		if summary {
			summaries++
		}
		mu.Unlock()
		if over {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: %d tokens > %d maximum"}}`, len(body)/4, window)
			return
		}
		text := "ok"
		if summary {
			var req struct {
				Messages []struct {
					Content json.RawMessage `json:"content"`
				} `json:"messages"`
			}
			_ = json.Unmarshal(body, &req)
			var all strings.Builder
			for _, m := range req.Messages {
				var s string
				if json.Unmarshal(m.Content, &s) != nil {
					var blocks []struct{ Text string }
					_ = json.Unmarshal(m.Content, &blocks)
					for _, b := range blocks {
						s += b.Text
					}
				}
				all.WriteString(s)
			}
			text = "Facts: " + strings.Join(anthropicFactRE.FindAllString(all.String(), -1), "; ")
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, textSSE(text))
	}))
	t.Cleanup(srv.Close)
	k := sdktest.NewAgent(t, sdktest.AgentOptions{},
		sdktest.Capsule{Manifest: react.Manifest, New: react.New},
		sdktest.Capsule{Manifest: promptbuilder.Manifest, New: promptbuilder.New},
		sdktest.Capsule{Manifest: session.Manifest, New: session.New},
		sdktest.Capsule{Manifest: registry.Manifest, New: registry.New},
		sdktest.Capsule{Manifest: anthropic.Manifest, New: anthropic.New, Config: map[string]string{
			"base_url": srv.URL, "api_key": "sk-ant-test-key", "context_window": fmt.Sprint(window)}},
	)
	compactions := 0
	for i := 1; i <= 60; i++ {
		r := k.RunPrompt(ipc.DefaultPrincipal, "long", fmt.Sprintf("Turn %d: the code word of turn %d is word%d. %s", i, i, i*37, strings.Repeat("More words to fill the window. ", 6)), ipc.PromptContext{})
		if r.Final.Outcome != ipc.OutcomeAnswer || r.Final.Provider != "anthropic" {
			t.Fatalf("turn %d: %+v", i, r.Final)
		}
		for _, ev := range r.Events {
			if ev.Kind == agentclient.EventCompacted && ev.Compacted.OK {
				compactions++
			}
		}
	}
	if r := k.RunPrompt(ipc.DefaultPrincipal, "long", "What was the code word of turn 2?", ipc.PromptContext{}); r.Final.Outcome != ipc.OutcomeAnswer {
		t.Fatalf("question: %+v", r.Final)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(last, "code word of turn 2 is word74") || strings.Contains(last, "Turn 2: the code word") {
		t.Fatalf("the question went out without turn 2's code word from the summary: %.1500s", last)
	}
	if refused != 0 || compactions < 2 || summaries != compactions {
		t.Fatalf("%d refused, %d compactions, %d summary requests", refused, compactions, summaries)
	}
}
