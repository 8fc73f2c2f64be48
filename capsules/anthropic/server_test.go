package anthropic_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/astrid-go/astrid/capsules/anthropic"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// reply is one answer of the fake API: a status, headers and a body,
// written chunk bytes at a time with a flush after each (0: at once), as
// a real connection delivers a stream in pieces.
type reply struct {
	status int
	header map[string]string
	body   []byte
	chunk  int
	// hang, after the body, waits for the client to go away instead of
	// ending the response (a stalled connection).
	hang bool
}

// fakeAPI is an httptest server for /v1/messages that answers each request
// with the next reply (the last one repeats) and records what it received.
type fakeAPI struct {
	t       testing.TB
	srv     *httptest.Server
	mu      sync.Mutex
	replies []reply
	got     []received
}

// received is one request as the server saw it.
type received struct {
	header http.Header
	body   map[string]any
	raw    []byte
}

func newFakeAPI(t testing.TB, replies ...reply) *fakeAPI {
	t.Helper()
	f := &fakeAPI{t: t, replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	f.mu.Lock()
	n := len(f.got)
	f.got = append(f.got, received{header: r.Header.Clone(), body: body, raw: raw})
	rep := f.replies[min(n, len(f.replies)-1)]
	f.mu.Unlock()
	if r.URL.Path != "/v1/messages" {
		http.Error(w, "no such path "+r.URL.Path, http.StatusNotFound)
		return
	}
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	if rep.status == 0 {
		rep.status = http.StatusOK
	}
	if w.Header().Get("Content-Type") == "" {
		if rep.status == http.StatusOK {
			w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
	}
	w.WriteHeader(rep.status)
	fl := w.(http.Flusher)
	fl.Flush()
	chunk := rep.chunk
	if chunk <= 0 {
		chunk = len(rep.body)
	}
	for b := rep.body; len(b) > 0; {
		n := min(chunk, len(b))
		if _, err := w.Write(b[:n]); err != nil {
			return
		}
		fl.Flush()
		b = b[n:]
	}
	if rep.hang {
		<-r.Context().Done()
	}
}

// requests is what the server received so far.
func (f *fakeAPI) requests() []received {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]received(nil), f.got...)
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// provider is the capsule under test with its [env] pointed at api.
func provider(api *fakeAPI, env map[string]string) sdktest.Capsule {
	cfg := map[string]string{"base_url": api.srv.URL, "api_key": "sk-ant-test-key"}
	for k, v := range env {
		if v == "" {
			delete(cfg, k)
		} else {
			cfg[k] = v
		}
	}
	return sdktest.Capsule{Manifest: anthropic.Manifest, New: anthropic.New, Config: cfg}
}

// generate boots the provider against api and runs one request.
func generate(t *testing.T, api *fakeAPI, env map[string]string, req ipc.LLMRequest) []ipc.StreamEvent {
	t.Helper()
	k := sdktest.New(t, provider(api, env))
	if req.RequestID == "" {
		req.RequestID = "req-" + t.Name()
	}
	if req.Messages == nil {
		req.Messages = []ipc.Message{ipc.TextMessage(ipc.RoleUser, "Hello")}
	}
	return k.Generate(anthropic.Provider, req)
}
