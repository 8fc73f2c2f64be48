package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	fetchcapsule "github.com/astrid-go/astrid/capsules/http"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/ipc"
)

// The fetch_url capsule built to wasm reaches an operator-allowed local
// server through the wasm host's HTTPDo and reduces its HTML as it does
// natively (capsules/http's tests); the egress rules hold for the guest
// too: a redirect to another local port and a decimal spelling of
// loopback are refused, and that server is never reached.
func TestFetchURLWasm(t *testing.T) {
	var hits atomic.Int64
	forbidden := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(forbidden.Close)
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<title>T</title><script>hidden()</script><h1>Hi</h1><p>See <a href="/x">x</a></p>`)
		case "/redirect":
			http.Redirect(w, r, forbidden.URL+"/", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(allowed.Close)

	cfg := config.Default()
	cfg.Egress.Allow = []string{allowed.Listener.Addr().String()}
	k, _ := bootTestConfig(t, nil, cfg)
	loadAsWasm(t, k, newWasmRuntime(t, k), "../../capsules/http", fetchcapsule.Manifest)
	if c, ok := k.Registry.Get("astrid-capsule-http"); !ok || len(c.Engines()) != 1 || c.Engines()[0] != "wasm" {
		t.Fatalf("astrid-capsule-http is not loaded through the wasm engine (%v)", ok)
	}
	fetchURL := func(url string) ipc.ToolCallResult {
		t.Helper()
		args, _ := json.Marshal(map[string]string{"url": url})
		res, err := k.CallTool(context.Background(), ipc.DefaultPrincipal, "fetch_url", args, testTimeout)
		if err != nil {
			t.Fatalf("fetch_url %s: %v", url, err)
		}
		return res
	}

	want := "Status: 200\nContent-Type: text/html\n\nTitle: T\n\n# Hi\n\nSee x [1]\n\nLinks:\n[1] " + allowed.URL + "/x"
	if res := fetchURL(allowed.URL + "/page"); res.IsError || res.Content != want {
		t.Fatalf("page:\n got %q\nwant %q", res.Content, want)
	}
	_, port, _ := strings.Cut(strings.TrimPrefix(forbidden.URL, "http://"), ":")
	for _, url := range []string{allowed.URL + "/redirect", "http://2130706433:" + port + "/"} {
		if res := fetchURL(url); !res.IsError || !strings.Contains(res.Content, "refused by the host's egress rules") ||
			!strings.Contains(res.Content, "forbidden address 127.0.0.1") {
			t.Fatalf("%s: %+v", url, res)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the forbidden server received %d requests", n)
	}
}
