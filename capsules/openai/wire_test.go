package openai_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/astrid-go/astrid/capsules/openai"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// wireServer is a local OpenAI-compatible server: each request is answered
// by the next reply in line (the last one repeats), and every request it
// received is kept.
type wireServer struct {
	*httptest.Server
	t       testing.TB
	mu      sync.Mutex
	replies []reply
	got     []received
}

// received is one request as the server saw it.
type received struct {
	path   string
	header http.Header
	body   []byte
}

// reply is one answer: a status, headers, and a body written in pieces of
// piece bytes (7 when zero), each flushed, as a server streams them; stall
// makes the server hold the connection open after the body without
// another byte until the client goes.
type reply struct {
	status int
	header map[string]string
	body   []byte
	piece  int
	stall  bool
}

func newWireServer(t testing.TB, replies ...reply) *wireServer {
	t.Helper()
	s := &wireServer{t: t, replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *wireServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.got = append(s.got, received{path: r.URL.Path, header: r.Header.Clone(), body: body})
	rep := s.replies[min(len(s.got), len(s.replies))-1]
	s.mu.Unlock()
	status := rep.status
	if status == 0 {
		status = http.StatusOK
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	}
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(status)
	piece := rep.piece
	if piece == 0 {
		piece = 7
	}
	for b := rep.body; len(b) > 0; {
		n := min(piece, len(b))
		if _, err := w.Write(b[:n]); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		b = b[n:]
	}
	if rep.stall {
		<-r.Context().Done()
	}
}

func (s *wireServer) requests() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.got...)
}

// fixture is a recorded wire stream from testdata.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sse is a stream of chunks, as OpenAI sends them, from (delta,
// finish_reason) pairs of JSON texts.
func sse(pairs ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		b.WriteString(`data: {"id":"chatcmpl-t","object":"chat.completion.chunk","created":1764590000,"model":"m","choices":[{"index":0,"delta":` +
			pairs[i] + `,"logprobs":null,"finish_reason":` + pairs[i+1] + "}]}\n\n")
	}
	return b.String()
}

// firstEvents is the first n events of a fixture, whole, as a server that
// closed the connection after them sent it.
func firstEvents(t testing.TB, name string, n int) []byte {
	t.Helper()
	events := strings.SplitAfter(string(fixture(t, name)), "\n\n")
	if len(events) < n {
		t.Fatalf("%s has %d events", name, len(events))
	}
	return []byte(strings.Join(events[:n], ""))
}

// bootAt boots the provider pointed at srv's /v1, with more [env] values.
func bootAt(t testing.TB, srv *wireServer, env ...string) *sdktest.Kernel {
	t.Helper()
	cfg := map[string]string{"base_url": srv.URL + "/v1", "model": "test-model"}
	for i := 0; i+1 < len(env); i += 2 {
		cfg[env[i]] = env[i+1]
	}
	return sdktest.New(t, sdktest.Capsule{Manifest: openai.Manifest, New: openai.New, Config: cfg})
}

func ask(id, text string) ipc.LLMRequest {
	return ipc.LLMRequest{RequestID: id, System: "You are terse.", Messages: []ipc.Message{ipc.TextMessage(ipc.RoleUser, text)}}
}

// call is one tool call as the stream assembled it.
type call struct{ id, name, args string }

// outcome is a stream's events folded: the text, the reasoning, the tool
// calls, the usage and how it ended. It fails the test on a stream that
// breaks the contract: an event after the end, a Delta or End for a call
// not started (or already ended), a call started twice, a call not ended.
type outcome struct {
	text, reasoning string
	calls           []call
	usage           *ipc.Usage
	end             ipc.StreamEvent
	deltas          int
}

func fold(t testing.TB, events []ipc.StreamEvent) outcome {
	t.Helper()
	var o outcome
	open := map[string]int{}
	ended := map[string]bool{}
	for i, ev := range events {
		if o.end.Kind != "" {
			t.Fatalf("event %d after the end: %+v", i, ev)
		}
		switch ev.Kind {
		case ipc.StreamTextDelta:
			o.text += ev.Text
		case ipc.StreamReasoningDelta:
			o.reasoning += ev.Text
		case ipc.StreamToolCallStart:
			if _, dup := open[ev.ID]; dup || ended[ev.ID] || ev.ID == "" {
				t.Fatalf("call %q started twice or without id: %+v", ev.ID, events)
			}
			open[ev.ID] = len(o.calls)
			o.calls = append(o.calls, call{id: ev.ID, name: ev.Name})
		case ipc.StreamToolCallDelta:
			j, ok := open[ev.ID]
			if !ok {
				t.Fatalf("delta for call %q, which is not open: %+v", ev.ID, events)
			}
			o.calls[j].args += ev.ArgsDelta
			o.deltas++
		case ipc.StreamToolCallEnd:
			if _, ok := open[ev.ID]; !ok {
				t.Fatalf("end of call %q, which is not open: %+v", ev.ID, events)
			}
			delete(open, ev.ID)
			ended[ev.ID] = true
		case ipc.StreamUsage:
			u := ev.Usage
			o.usage = &u
		case ipc.StreamDone, ipc.StreamError:
			o.end = ev
		}
	}
	if o.end.Kind == ipc.StreamDone && len(open) > 0 {
		t.Fatalf("calls never ended: %v", open)
	}
	return o
}

func jsonOf(t testing.TB, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("request body %s: %v", body, err)
	}
	return m
}

func mustContain(t testing.TB, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Fatalf("%s %q lacks %q", what, got, w)
		}
	}
}
