package http_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	fetch "github.com/astrid-go/astrid/capsules/http"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

func TestRegistrationsMatchManifest(t *testing.T) {
	sdktest.CheckRegistrations(t, fetch.Manifest, fetch.New())
}

const page = `<!DOCTYPE html><html><head><title>Test page</title><style>p{}</style>
<script>var token = "do-not-show";</script></head>
<body><h1>Welcome</h1><p>First <a href="/data.json">data</a>.</p><ul><li>one</li><li>two</li></ul></body></html>`

// servers is the operator-allowed test server and another local one that
// nothing may reach; forbidden counts the requests the latter received.
type servers struct {
	allowed   *httptest.Server
	forbidden *httptest.Server
	hits      atomic.Int64
	// release unblocks /slow when the test ends.
	release chan struct{}
}

func (s *servers) url(path string) string { return s.allowed.URL + path }

// forbiddenPort is the port of the server no fetch may reach.
func (s *servers) forbiddenPort() string {
	_, port, _ := net.SplitHostPort(s.forbidden.Listener.Addr().String())
	return port
}

func newServers(t *testing.T) *servers {
	t.Helper()
	s := &servers{release: make(chan struct{})}
	s.forbidden = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		fmt.Fprint(w, "internal secret")
	}))
	t.Cleanup(s.forbidden.Close)
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	})
	mux.HandleFunc("/data.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"name":"astrid","tags":["<b>","\"q\""]}`)
	})
	mux.HandleFunc("/large", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, strings.Repeat("0123456789abcdef", 64<<10)) // 1 MiB
	})
	mux.HandleFunc("/quotes", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, strings.Repeat(`"\`, 512<<10)) // every byte costs two in JSON
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		chunk := strings.Repeat("x", 1<<20)
		for range 11 {
			if _, err := fmt.Fprint(w, chunk); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "first part, then nothing")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-s.release:
		}
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such page", http.StatusNotFound)
	})
	mux.HandleFunc("/binary", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
	})
	mux.HandleFunc("/redirect/page", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/page", http.StatusFound)
	})
	mux.HandleFunc("/redirect/local", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, s.forbidden.URL+"/secret", http.StatusFound)
	})
	mux.HandleFunc("/redirect/metadata", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/redirect/file", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	})
	mux.HandleFunc("/redirect/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/redirect/loop", http.StatusFound)
	})
	s.allowed = httptest.NewServer(mux)
	t.Cleanup(s.allowed.Close)
	t.Cleanup(func() { close(s.release) }) // runs first: /slow returns, then Close
	return s
}

// hosts answers the capsule's DNS lookups: names an attacker controls
// that resolve to addresses the guard must refuse.
type hosts map[string][]netip.Addr

func (h hosts) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if addrs, ok := h[strings.ToLower(strings.TrimSuffix(host, "."))]; ok {
		return addrs, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func boot(t *testing.T, s *servers, timeout time.Duration) *sdktest.Kernel {
	t.Helper()
	return sdktest.NewWithNetwork(t, sdktest.Network{
		Allow:          []string{s.allowed.Listener.Addr().String()},
		RequestTimeout: timeout,
		Resolver: hosts{
			"localhost":       {netip.MustParseAddr("127.0.0.1")},
			"loopback.test":   {netip.MustParseAddr("127.0.0.1")},
			"metadata.test":   {netip.MustParseAddr("169.254.169.254")},
			"lan.test":        {netip.MustParseAddr("192.168.1.10")},
			"mapped.test":     {netip.MustParseAddr("::ffff:127.0.0.1")},
			"allowed.test":    {netip.MustParseAddr("127.0.0.1")},
			"private6.test":   {netip.MustParseAddr("fd00::1")},
			"unroutable.test": {netip.MustParseAddr("0.0.0.0")},
		},
	}, sdktest.Capsule{Manifest: fetch.Manifest, New: fetch.New})
}

func call(t *testing.T, k *sdktest.Kernel, args map[string]any) ipc.ToolCallResult {
	t.Helper()
	return k.CallTool("fetch_url", args)
}

func TestFetchFromAnAllowedLocalServer(t *testing.T) {
	s := newServers(t)
	k := boot(t, s, 0)
	for _, c := range []struct {
		name string
		args map[string]any
		want []string
		not  []string
	}{
		{"HTML reduced to text", map[string]any{"url": s.url("/page")},
			[]string{"Status: 200\nContent-Type: text/html; charset=utf-8\n\nTitle: Test page\n\n# Welcome\n\nFirst data [1].\n\n- one\n- two\n\nLinks:\n[1] " + s.url("/data.json")},
			[]string{"do-not-show", "p{}", "<h1>"}},
		{"HTML raw on request", map[string]any{"url": s.url("/page"), "format": "raw"},
			[]string{"<h1>Welcome</h1>", "do-not-show"}, nil},
		{"JSON passed through", map[string]any{"url": s.url("/data.json")},
			[]string{"Content-Type: application/json\n\n" + `{"name":"astrid","tags":["<b>","\"q\""]}`}, nil},
		{"4xx is data, not an error", map[string]any{"url": s.url("/missing")},
			[]string{"Status: 404\n", "no such page"}, nil},
		{"binary described, not shown", map[string]any{"url": s.url("/binary")},
			[]string{"[binary content: 16 bytes of image/png, not shown]"}, []string{"PNG"}},
		{"a redirect to the same allowed server is followed", map[string]any{"url": s.url("/redirect/page")},
			[]string{"Status: 200", "# Welcome"}, nil},
		{"the scheme is case-insensitive and the URL trimmed", map[string]any{"url": "  HTTP" + strings.TrimPrefix(s.url("/data.json"), "http") + " "},
			[]string{`"astrid"`}, nil},
		{"a name resolving to the allowed endpoint reaches it", map[string]any{"url": "http://allowed.test:" + port(s.allowed) + "/data.json"},
			[]string{`"astrid"`}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := call(t, k, c.args)
			if res.IsError {
				t.Fatalf("error: %s", res.Content)
			}
			for _, w := range c.want {
				if !strings.Contains(res.Content, w) {
					t.Errorf("result lacks %q:\n%s", w, res.Content)
				}
			}
			for _, n := range c.not {
				if strings.Contains(res.Content, n) {
					t.Errorf("result shows %q:\n%s", n, res.Content)
				}
			}
		})
	}
}

func port(s *httptest.Server) string {
	_, p, _ := net.SplitHostPort(s.Listener.Addr().String())
	return p
}

// The size caps: the text is cut at max_bytes saying how much was left
// out; the largest max_bytes, even of text that doubles when
// JSON-escaped, still fits the bus; a body over the host's cap is refused
// by name.
func TestFetchSizeCaps(t *testing.T) {
	s := newServers(t)
	k := boot(t, s, 0)

	res := call(t, k, map[string]any{"url": s.url("/large")})
	if res.IsError || !strings.Contains(res.Content, "[...truncated: showing 204800 of 1048576 bytes, 843776 bytes left out;") {
		t.Fatalf("default cap: %.300s…", res.Content)
	}
	res = call(t, k, map[string]any{"url": s.url("/large"), "max_bytes": 100})
	body := strings.SplitN(res.Content, "\n\n", 2)[1]
	if res.IsError || !strings.HasPrefix(body, strings.Repeat("0123456789abcdef", 6)+"0123\n\n[...truncated: showing 100 of 1048576 bytes") {
		t.Fatalf("max_bytes 100: %q", res.Content)
	}
	res = call(t, k, map[string]any{"url": s.url("/quotes"), "max_bytes": 256 << 10})
	if res.IsError || !strings.Contains(res.Content, "[...truncated: showing 262144 of 1048576 bytes") {
		t.Fatalf("quotes at the largest max_bytes: %.300s", res.Content)
	}
	res = call(t, k, map[string]any{"url": s.url("/huge")})
	if !res.IsError || !strings.Contains(res.Content, "the response is larger than the host accepts (10485760 bytes)") {
		t.Fatalf("over the host's cap: %.300s", res.Content)
	}
	for _, bad := range []int{0, -1, 256<<10 + 1} {
		res = call(t, k, map[string]any{"url": s.url("/large"), "max_bytes": bad})
		if !res.IsError || !strings.Contains(res.Content, fmt.Sprintf("max_bytes is %d; it must be between 1 and 262144", bad)) {
			t.Fatalf("max_bytes %d: %s", bad, res.Content)
		}
	}
	res = call(t, k, map[string]any{"url": s.url("/page"), "format": "markdown"})
	if !res.IsError || !strings.Contains(res.Content, `format "markdown" is neither "text" nor "raw"`) {
		t.Fatalf("format: %s", res.Content)
	}
}

// The time cap is the host's: a server that stops sending mid-body is
// cut off when the egress client's request limit passes (set short here),
// and the tool says it timed out; the kernel goes on serving.
func TestFetchTimesOutOnASlowBody(t *testing.T) {
	s := newServers(t)
	k := boot(t, s, 300*time.Millisecond)
	res := call(t, k, map[string]any{"url": s.url("/slow")})
	if !res.IsError || !strings.Contains(res.Content, "fetch_url "+s.url("/slow")+": timed out") {
		t.Fatalf("slow body: %s", res.Content)
	}
	if res := call(t, k, map[string]any{"url": s.url("/data.json")}); res.IsError {
		t.Fatalf("after the timeout: %s", res.Content)
	}
}

// Every way of spelling an address the guard must refuse is refused with
// a message that says why, and the forbidden server is never reached.
func TestFetchRefusesSSRF(t *testing.T) {
	s := newServers(t)
	k := boot(t, s, 0)
	fp := s.forbiddenPort()
	egress := "refused by the host's egress rules"
	for _, c := range []struct{ url, want string }{
		// Refused by the tool before any request.
		{"http://user:pass@127.0.0.1:" + fp + "/", "carries userinfo"},
		{"http://user@" + strings.TrimPrefix(s.url("/page"), "http://"), "carries userinfo"},
		{"http://[fe80::1%25eth0]:" + fp + "/", "IPv6 zone"},
		{"file:///etc/passwd", `scheme "file" is refused`},
		{"gopher://127.0.0.1:" + fp + "/_x", `scheme "gopher" is refused`},
		{"ftp://127.0.0.1/", `scheme "ftp" is refused`},
		{s.url("/?q=" + strings.Repeat("a", 10<<10)), "fetch_url takes URLs of at most 8192 bytes"},
		// Refused by the host's egress client.
		{"http://127.0.0.1:" + fp + "/", egress},
		{"http://2130706433:" + fp + "/", egress},            // decimal
		{"http://017700000001:" + fp + "/", egress},          // octal, whole
		{"http://0177.0.0.1:" + fp + "/", egress},            // octal, dotted
		{"http://0x7f.0.0.1:" + fp + "/", egress},            // hex, dotted
		{"http://0x7f000001:" + fp + "/", egress},            // hex, whole
		{"http://127.1:" + fp + "/", egress},                 // short form
		{"http://0.0.0.0:" + fp + "/", egress},               // "this host"
		{"http://0:" + fp + "/", egress},                     // 0.0.0.0 again
		{"http://[::1]:" + fp + "/", egress},                 // IPv6 loopback
		{"http://[::]:" + fp + "/", egress},                  // IPv6 unspecified
		{"http://[::ffff:127.0.0.1]:" + fp + "/", egress},    // IPv4-mapped
		{"http://169.254.169.254/latest/meta-data/", egress}, // cloud metadata
		{"http://[fd00::1]/", egress},                        // unique local
		{"http://10.0.0.1/", egress},
		{"http://192.168.1.1/", egress},
		{"http://localhost:" + fp + "/", egress},
		{"http://LOCALHOST.:" + fp + "/", egress},
		{"http://loopback.test:" + fp + "/", egress}, // DNS answers loopback
		{"http://metadata.test/", egress},            // DNS answers the metadata address
		{"http://lan.test/", egress},
		{"http://mapped.test:" + fp + "/", egress},
		{"http://private6.test/", egress},
		{"http://unroutable.test:" + fp + "/", egress},
		// Redirects are checked at every hop.
		{s.url("/redirect/local"), egress},
		{s.url("/redirect/metadata"), egress},
		{s.url("/redirect/file"), egress},
		{s.url("/redirect/loop"), "stopped after 10 redirects"},
	} {
		t.Run(c.url[:min(len(c.url), 60)], func(t *testing.T) {
			res := call(t, k, map[string]any{"url": c.url})
			if !res.IsError || !strings.Contains(res.Content, c.want) {
				t.Fatalf("fetch_url %s:\n got %s\nwant an error containing %q", c.url, res.Content, c.want)
			}
			// A refused address is named with its reason (loopback,
			// link-local, ...), whatever spelling or name led to it.
			if c.want == egress && !strings.Contains(c.url, "/redirect/") && !strings.Contains(res.Content, "forbidden address") {
				t.Fatalf("fetch_url %s: the refusal does not name the address: %s", c.url, res.Content)
			}
			if strings.Contains(res.Content, "internal secret") {
				t.Fatalf("the forbidden server's answer reached the caller: %s", res.Content)
			}
		})
	}
	if n := s.hits.Load(); n != 0 {
		t.Fatalf("the forbidden server received %d requests", n)
	}
}
