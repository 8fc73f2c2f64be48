package anthropic_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/astrid-go/astrid/capsules/anthropic"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// modelsAPI answers GET /v1/models with h, counting the requests and
// checking they carry the key, the API version and the page size.
func modelsAPI(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		n.Add(1)
		if !strings.Contains(r.Header.Get("X-Api-Key")+r.Header.Get("Authorization"), "sk-ant-test-key") || r.Header.Get("Anthropic-Version") == "" || r.URL.Query().Get("limit") != "1000" {
			http.Error(w, fmt.Sprintf("bad request headers: %v %q", r.Header, r.URL.RawQuery), http.StatusBadRequest)
			return
		}
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// modelsJSON writes body as the API does.
func modelsJSON(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}
}

type entry struct {
	ID    string `json:"id"`
	Ready bool   `json:"ready"`
	Note  string `json:"note"`
}

func describeWith(t *testing.T, k *sdktest.Kernel, payload string) []entry {
	t.Helper()
	var d struct{ Providers []entry }
	if err := json.Unmarshal(k.DescribeLLMWith([]byte(payload)), &d); err != nil || len(d.Providers) == 0 {
		t.Fatalf("describe: %v %+v", err, d)
	}
	return d.Providers
}

func ids(es []entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

func boot(t *testing.T, srv *httptest.Server) *sdktest.Kernel {
	return sdktest.New(t, sdktest.Capsule{Manifest: anthropic.Manifest, New: anthropic.New,
		Config: map[string]string{"base_url": srv.URL, "api_key": "sk-ant-test-key"}})
}

// The API's list (its wire format, newest first): read on a describe that
// asks to refresh, listed after the configured model, kept, and not asked
// again within a minute; a plain describe never asks.
func TestModelsTheAPILists(t *testing.T) {
	const list = `{"data":[{"type":"model","id":"claude-opus-5-6","display_name":"Claude Opus 5.6","created_at":"2026-11-20T00:00:00Z"},` +
		`{"type":"model","id":"claude-sonnet-5-5","display_name":"Claude Sonnet 5.5","created_at":"2026-09-01T00:00:00Z"}],` +
		`"has_more":false,"first_id":"claude-opus-5-6","last_id":"claude-sonnet-5-5"}`
	srv, n := modelsAPI(t, modelsJSON(list))
	k := boot(t, srv)
	if got := ids(describeWith(t, k, `{}`)); !slices.Equal(got, append([]string{anthropic.DefaultModel}, "claude-opus-5-5", "claude-haiku-5-5")) || n.Load() != 0 {
		t.Fatalf("before a refresh: %q, %d list requests", got, n.Load())
	}
	es := describeWith(t, k, `{"refresh":true}`)
	if got, want := ids(es), []string{anthropic.DefaultModel, "claude-opus-5-6"}; !slices.Equal(got, want) || es[0].Note != "" || !es[0].Ready || n.Load() != 1 {
		t.Fatalf("refreshed: %q (want %q), %+v, %d list requests", got, want, es[0], n.Load())
	}
	if got := ids(describeWith(t, k, `{"refresh":true}`)); len(got) != 2 || n.Load() != 1 {
		t.Fatalf("a second refresh at once: %q, %d list requests", got, n.Load())
	}
}

// A list endpoint that misbehaves never hangs a describe: 10,000 models
// are cut to 200, HTML, garbage and a 404 leave the well-known ids listed
// with a note saying why, and one that never answers is given up on at
// the provider's own deadline (the handler blocks until the request's
// context ends).
func TestModelsEndpointMisbehaving(t *testing.T) {
	var huge strings.Builder
	huge.WriteString(`{"data":[`)
	for i := range 10000 {
		if i > 0 {
			huge.WriteByte(',')
		}
		fmt.Fprintf(&huge, `{"type":"model","id":"c%05d"}`, i)
	}
	huge.WriteString(`],"has_more":true}`)
	srv, _ := modelsAPI(t, modelsJSON(huge.String()))
	if got := ids(describeWith(t, boot(t, srv), `{"refresh":true}`)); len(got) != 201 || got[1] != "c00000" || got[200] != "c00199" {
		t.Fatalf("10,000 models: %d listed", len(got))
	}
	for name, h := range map[string]http.HandlerFunc{
		"html": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, "<html>Bad gateway</html>")
		},
		"garbage": modelsJSON(`{"data":[{"id":`),
		"404":     func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) },
		"stall":   func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
	} {
		t.Run(name, func(t *testing.T) {
			srv, _ := modelsAPI(t, h)
			es := describeWith(t, boot(t, srv), `{"refresh":true}`)
			if got := ids(es); !slices.Equal(got, []string{anthropic.DefaultModel, "claude-opus-5-5", "claude-haiku-5-5"}) ||
				!strings.Contains(es[0].Note, "was not read") || !strings.Contains(es[0].Note, "well-known Claude ids are listed") {
				t.Fatalf("listed %q, note %q", got, es[0].Note)
			}
			if name == "stall" && !strings.Contains(es[0].Note, "no answer within 2s") {
				t.Fatalf("the stall's note: %q", es[0].Note)
			}
		})
	}
}

// A model's max_input_tokens in the API's list is the context window
// describe reports for it (the registry passes it to the agent's
// compaction threshold); a model without one keeps the configured
// default, and an operator's own [env] context_window wins.
func TestModelListContextWindows(t *testing.T) {
	const list = `{"data":[{"type":"model","id":"claude-opus-5-6","display_name":"Claude Opus 5.6","created_at":"2026-11-20T00:00:00Z","max_input_tokens":1000000,"max_tokens":128000},` +
		`{"type":"model","id":"claude-old","display_name":"Old","created_at":"2025-01-01T00:00:00Z"}],"has_more":false,"first_id":"claude-opus-5-6","last_id":"claude-old"}`
	srv, _ := modelsAPI(t, modelsJSON(list))
	windows := func(extra map[string]string) map[string]uint64 {
		t.Helper()
		cfg := map[string]string{"base_url": srv.URL, "api_key": "sk-ant-test-key"}
		for k, v := range extra {
			cfg[k] = v
		}
		k := sdktest.New(t, sdktest.Capsule{Manifest: anthropic.Manifest, New: anthropic.New, Config: cfg})
		var d struct {
			Providers []struct {
				ID            string `json:"id"`
				ContextWindow uint64 `json:"context_window"`
			}
		}
		if err := json.Unmarshal(k.DescribeLLMWith([]byte(`{"refresh":true}`)), &d); err != nil {
			t.Fatal(err)
		}
		out := map[string]uint64{}
		for _, e := range d.Providers {
			out[e.ID] = e.ContextWindow
		}
		return out
	}
	if got := windows(nil); got["claude-opus-5-6"] != 1000000 || got["claude-old"] != 200000 {
		t.Fatalf("windows %v", got)
	}
	if got := windows(map[string]string{"context_window": "50000"}); got["claude-opus-5-6"] != 50000 {
		t.Fatalf("with [env] context_window 50000: %v", got)
	}
}
