package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/capsules/router"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

var streamerManifest = []byte(`
[package]
name = "streamer"
version = "0.1.0"

[capabilities]
net = ["api.example.com"]

[subscribe]
"tool.v1.request.describe" = { wit = "opaque", handler = "tool_describe" }
"tool.v1.execute.fetch" = { wit = "opaque", handler = "tool_execute_fetch" }

[publish]
"tool.v1.response.describe.streamer" = "opaque"
"tool.v1.execute.fetch.result" = "opaque"

[env]
base_url = { type = "text", description = "where to fetch", default = "" }
`)

type fetchArgs struct {
	URL string `json:"url"`
}

// newStreamer fetches a URL with the native streaming client, under the
// call's context, and answers the body.
func newStreamer() *sdk.Capsule {
	c := sdk.New("fetches with the streaming client")
	sdk.Tool(c, "fetch", "fetch a URL", func(call *sdk.Call, a fetchArgs) (string, error) {
		client, err := call.HTTPClient()
		if err != nil {
			return "", err
		}
		req, err := http.NewRequestWithContext(call.Context(), http.MethodGet, a.URL, nil)
		if err != nil {
			return "", err
		}
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	})
	return c
}

// bootStreamer boots the streamer with its [env] base_url set to baseURL
// ("" for none).
func bootStreamer(t *testing.T, baseURL string) *Kernel {
	t.Helper()
	home, ws := t.TempDir(), t.TempDir()
	if baseURL != "" {
		st, err := store.Open(filepath.Join(home, "state.db"), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Config("streamer").Set("base_url", []byte(baseURL)); err != nil {
			t.Fatal(err)
		}
		st.Close()
	}
	k, err := Boot(context.Background(), Options{
		Home: home, Workspace: ws, Config: config.Default(), Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
		Builtins:  []Builtin{{Manifest: router.Manifest, New: router.New}, {Manifest: streamerManifest, New: newStreamer}},
		Frontends: testFrontends(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k
}

func fetch(t *testing.T, k *Kernel, url string) ipc.ToolCallResult {
	t.Helper()
	args, _ := json.Marshal(fetchArgs{URL: url})
	res, err := k.CallTool(context.Background(), ipc.DefaultPrincipal, "fetch", args, testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The operator's URL in a capsule's [env] allows exactly that endpoint,
// loopback though it is; other ports of the host, another scheme, other
// loopback endpoints and redirects to them stay refused, and without the
// setting the loopback server is refused as any SSRF target is.
func TestStreamingClientAllowsOnlyTheOperatorsURL(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "other") }))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, other.URL+"/x", http.StatusFound)
			return
		}
		fmt.Fprint(w, "model says hi")
	}))
	defer srv.Close()

	k := bootStreamer(t, srv.URL+"/v1")
	if res := fetch(t, k, srv.URL+"/v1/chat"); res.IsError || res.Content != "model says hi" {
		t.Fatalf("the operator's endpoint: %+v", res)
	}
	for name, url := range map[string]string{
		"another loopback port":        other.URL,
		"a redirect to another port":   srv.URL + "/redirect",
		"another scheme, same host":    strings.Replace(srv.URL, "http://", "https://", 1),
		"the cloud metadata address":   "http://169.254.169.254/latest/meta-data",
		"localhost by another name":    strings.Replace(other.URL, "127.0.0.1", "localhost", 1),
		"a host outside the net grant": "http://example.org/",
	} {
		if res := fetch(t, k, url); !res.IsError || strings.Contains(res.Content, "other") {
			t.Errorf("%s (%s) was reached: %+v", name, url, res)
		}
	}

	// Without the operator's setting the loopback server is an SSRF target.
	k2 := bootStreamer(t, "")
	if res := fetch(t, k2, srv.URL+"/v1/chat"); !res.IsError {
		t.Fatalf("a loopback server was reached without the operator's URL: %+v", res)
	}
}

// Waiting on a slow stream is not the capsule's CPU: the ledger charges
// the handler's own time, not the seconds the server took.
func TestStreamingWaitIsNotChargedAsCPU(t *testing.T) {
	const pause = 300 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.(http.Flusher).Flush()
		time.Sleep(pause)
		fmt.Fprint(w, "late")
	}))
	defer srv.Close()
	k := bootStreamer(t, srv.URL)
	if res := fetch(t, k, srv.URL); res.IsError || res.Content != "late" {
		t.Fatalf("%+v", res)
	}
	if cpu := k.Ledger.Usage(ipc.DefaultPrincipal).CPU; cpu >= pause {
		t.Fatalf("the ledger charged %s for a call that mostly waited %s on the network", cpu, pause)
	}
}
