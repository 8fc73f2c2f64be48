package egress

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// testServer is a loopback HTTP server with a few redirecting routes.
func testServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok from "+r.Host)
	})
	mux.HandleFunc("/close", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		_, _ = io.WriteString(w, "ok")
	})
	mux.HandleFunc("/to", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("u"), http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, &hits
}

func newTestClient(t *testing.T, r *fakeResolver, fn *fakeNet, mod func(*Options)) *http.Client {
	t.Helper()
	opts := Options{Resolver: r, Dial: fn.dial, CheckHost: allowAnyHost, Logger: quietLogger()}
	if mod != nil {
		mod(&opts)
	}
	c, err := NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func get(ctx context.Context, c *http.Client, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

func serverAddr(srv *httptest.Server) string { return srv.Listener.Addr().String() }

func TestClientRoundTripsToAnAllowlistedLoopbackServer(t *testing.T) {
	srv, _ := testServer(t)
	addr := serverAddr(srv)
	r := newFakeResolver(map[string][]string{"local.test": {"127.0.0.1"}})
	fn := newFakeNet(t, map[string]string{addr: addr})
	c := newTestClient(t, r, fn, func(o *Options) { o.AllowLocal = []string{addr} })

	port := addr[strings.LastIndex(addr, ":")+1:]
	for _, u := range []string{
		"http://" + addr + "/ok",
		"http://local.test:" + port + "/ok",
		"http://" + addr + "/to?u=/ok", // same-host redirect is followed
	} {
		body, err := get(context.Background(), c, u)
		if err != nil || !strings.HasPrefix(body, "ok") {
			t.Fatalf("GET %s = %q, %v", u, body, err)
		}
	}
	assertNothingForbiddenDialled(t, fn, addr)
}

func TestClientRefusesEverySSRFSpelling(t *testing.T) {
	for _, host := range ssrfHosts {
		for _, scheme := range []string{"http", "https"} {
			t.Run(scheme+"://"+host, func(t *testing.T) {
				r := newFakeResolver(attackDNS())
				routes := publicRoutes()
				routes["93.184.216.34:443"] = ""
				routes["[2606:4700::1111]:443"] = ""
				fn := newFakeNet(t, routes)
				c := newTestClient(t, r, fn, nil)
				_, err := get(context.Background(), c, scheme+"://"+host+"/latest/meta-data/")
				if !errors.Is(err, ErrForbiddenAddress) {
					t.Fatalf("err = %v, want ErrForbiddenAddress", err)
				}
				if a := fn.addresses(); len(a) != 0 {
					t.Fatalf("the network was offered %v", a)
				}
			})
		}
	}
}

func TestClientRefusesALoopbackServerNotAllowlisted(t *testing.T) {
	srv, _ := testServer(t)
	addr := serverAddr(srv)
	port := addr[strings.LastIndex(addr, ":")+1:]
	r := newFakeResolver(map[string][]string{"local.test": {"127.0.0.1"}})
	fn := newFakeNet(t, map[string]string{addr: addr})
	// Right IP, wrong port.
	c := newTestClient(t, r, fn, func(o *Options) { o.AllowLocal = []string{"127.0.0.1:1"} })
	for _, u := range []string{srv.URL + "/ok", "http://local.test:" + port + "/ok"} {
		if _, err := get(context.Background(), c, u); !errors.Is(err, ErrForbiddenAddress) {
			t.Fatalf("GET %s: err = %v, want ErrForbiddenAddress", u, err)
		}
	}
	if a := fn.addresses(); len(a) != 0 {
		t.Fatalf("dialled %v", a)
	}
}

func TestClientRedirects(t *testing.T) {
	srv, hits := testServer(t)
	addr := serverAddr(srv)
	tests := []struct {
		name     string
		location string
		gate     func(string) error
		want     error
	}{
		{"to the metadata IP", "http://169.254.169.254/latest/meta-data/", allowAnyHost, ErrForbiddenAddress},
		{"to the metadata IP in hex", "http://0xa9fea9fe/latest/meta-data/", allowAnyHost, ErrForbiddenAddress},
		{"to a name resolving to the metadata IP", "http://metadata.example/latest/", allowAnyHost, ErrForbiddenAddress},
		{"to a name resolving to a private address", "http://internal.example/", allowAnyHost, ErrForbiddenAddress},
		{"to a host outside net", "http://evil.example/", onlyHost("127.0.0.1"), ErrDenied},
		{"to a non-HTTP scheme", "ftp://public.example/", allowAnyHost, ErrDenied},
		{"to file://", "file:///etc/passwd", allowAnyHost, ErrDenied},
		{"to a URL with userinfo", "http://trusted.example@public.example/", allowAnyHost, ErrDenied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newFakeResolver(attackDNS())
			fn := newFakeNet(t, map[string]string{addr: addr})
			c := newTestClient(t, r, fn, func(o *Options) {
				o.AllowLocal = []string{addr}
				o.CheckHost = tt.gate
			})
			_, err := get(context.Background(), c, srv.URL+"/to?u="+tt.location)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if got := fn.addresses(); !slices.Equal(got, []string{addr}) {
				t.Fatalf("dialled %v, want only the test server %s", got, addr)
			}
			if tt.want == ErrDenied && slices.Contains(r.queries(), "evil.example") {
				t.Fatal("a host the gate refused was resolved")
			}
		})
	}

	t.Run("at most MaxRedirects hops", func(t *testing.T) {
		fn := newFakeNet(t, map[string]string{addr: addr})
		c := newTestClient(t, newFakeResolver(nil), fn, func(o *Options) { o.AllowLocal = []string{addr} })
		hits.Store(0)
		_, err := get(context.Background(), c, srv.URL+"/loop")
		if !errors.Is(err, ErrDenied) || !strings.Contains(err.Error(), "redirects") {
			t.Fatalf("err = %v", err)
		}
		if n := hits.Load(); n != MaxRedirects {
			t.Fatalf("server saw %d requests, want %d", n, MaxRedirects)
		}
	})
}

func onlyHost(allowed string) func(string) error {
	return func(host string) error {
		if host == allowed {
			return nil
		}
		return errors.New("not in net: " + host)
	}
}

func TestClientAsksNetWithTheNormalisedHost(t *testing.T) {
	tests := []struct{ url, host string }{
		{"http://Example.COM./x", "example.com"},
		{"http://0x7f.1/", "127.0.0.1"},
		{"https://[::FFFF:7F00:1]:8443/", "::ffff:127.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			var seen []string
			fn := newFakeNet(t, nil)
			c := newTestClient(t, newFakeResolver(nil), fn, func(o *Options) {
				o.CheckHost = func(h string) error { seen = append(seen, h); return errors.New("no") }
			})
			_, err := get(context.Background(), c, tt.url)
			if !errors.Is(err, ErrDenied) || strings.Contains(err.Error(), "pw@") {
				t.Fatalf("err = %v, want ErrDenied without the password", err)
			}
			if !slices.Equal(seen, []string{tt.host}) {
				t.Fatalf("CheckHost saw %v, want %q", seen, tt.host)
			}
			if a := fn.addresses(); len(a) != 0 {
				t.Fatalf("dialled %v", a)
			}
		})
	}
}

// closeRecorder is a request body that remembers being closed.
type closeRecorder struct {
	io.Reader
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

func TestClientRefusesMalformedRequests(t *testing.T) {
	fn := newFakeNet(t, nil)
	c := newTestClient(t, newFakeResolver(nil), fn, nil)
	for _, u := range []string{
		"http://example.123/",
		"http://public.example:0/",
		"http://public.example:99999/",
		"http://[::1/",
	} {
		if _, err := get(context.Background(), c, u); err == nil {
			t.Errorf("GET %s succeeded", u)
		}
	}
	body := &closeRecorder{Reader: strings.NewReader("x")}
	req, _ := http.NewRequest(http.MethodPost, "gopher://public.example/", body)
	if _, err := c.Transport.RoundTrip(req); !errors.Is(err, ErrDenied) {
		t.Fatalf("gopher: err = %v", err)
	}
	if !body.closed {
		t.Fatal("a refused request's body was not closed")
	}
	if _, err := c.Transport.RoundTrip(&http.Request{Method: http.MethodGet}); !errors.Is(err, ErrInvalidAddress) {
		t.Fatalf("no URL: err = %v", err)
	}
	if a := fn.addresses(); len(a) != 0 {
		t.Fatalf("dialled %v", a)
	}
}

// HTTP_PROXY and friends point at a loopback listener that would accept
// anything, and is even allowlisted; the client must still connect directly.
func TestClientIgnoresProxyEnvironment(t *testing.T) {
	proxy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var proxied atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := proxy.Accept()
			if err != nil {
				return
			}
			proxied.Add(1)
			_ = c.Close()
		}
	}()
	defer func() { _ = proxy.Close(); <-done }()
	proxyURL := "http://" + proxy.Addr().String()
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
		t.Setenv(k, proxyURL)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")

	srv, _ := testServer(t)
	addr := serverAddr(srv)
	r := newFakeResolver(attackDNS())
	fn := newFakeNet(t, map[string]string{"93.184.216.34:80": addr, proxy.Addr().String(): proxy.Addr().String()})
	c := newTestClient(t, r, fn, func(o *Options) { o.AllowLocal = []string{proxy.Addr().String()} })

	body, err := get(context.Background(), c, "http://public.example/ok")
	if err != nil || body != "ok from public.example" {
		t.Fatalf("GET = %q, %v", body, err)
	}
	if n := proxied.Load(); n != 0 {
		t.Fatalf("the proxy received %d connections", n)
	}
	if got := fn.addresses(); !slices.Equal(got, []string{"93.184.216.34:80"}) {
		t.Fatalf("dialled %v", got)
	}
	if c.Transport.(*checkedTransport).next.Proxy != nil {
		t.Fatal("the transport has a Proxy function")
	}
}

// Each new connection re-resolves and re-checks: a name that answers a
// public address first and a private one next is refused the second time.
func TestClientChecksEveryConnectionOfARebindingName(t *testing.T) {
	srv, _ := testServer(t)
	r := newFakeResolver(nil)
	r.add("rebind.example", "93.184.216.34")
	r.add("rebind.example", "10.0.0.1")
	fn := newFakeNet(t, map[string]string{"93.184.216.34:80": serverAddr(srv)})
	c := newTestClient(t, r, fn, nil)

	// The server closes the connection, so the second request must dial anew.
	if _, err := get(context.Background(), c, "http://rebind.example/close"); err != nil {
		t.Fatalf("first request: %v", err)
	}
	_, err := get(context.Background(), c, "http://rebind.example/close")
	if !errors.Is(err, ErrForbiddenAddress) || !strings.Contains(err.Error(), "10.0.0.1") {
		t.Fatalf("second request: err = %v, want 10.0.0.1 refused", err)
	}
	if got := fn.addresses(); !slices.Equal(got, []string{"93.184.216.34:80"}) {
		t.Fatalf("dialled %v", got)
	}
}

func TestNewClientOptions(t *testing.T) {
	if _, err := NewClient(Options{}); err == nil || !strings.Contains(err.Error(), "CheckHost") {
		t.Fatalf("NewClient without CheckHost: %v", err)
	}
	if _, err := NewClient(Options{CheckHost: allowAnyHost, AllowLocal: []string{"nope"}}); !errors.Is(err, ErrInvalidAddress) {
		t.Fatalf("NewClient with a bad allowlist: %v", err)
	}
	c, err := NewClient(Options{CheckHost: allowAnyHost})
	if err != nil {
		t.Fatal(err)
	}
	if c.Timeout != DefaultRequestTimeout || c.Jar != nil {
		t.Fatalf("timeout %v, jar %v", c.Timeout, c.Jar)
	}
	if g := c.Transport.(*checkedTransport).policy.g; g.timeout != DefaultConnectTimeout {
		t.Fatalf("connect timeout %v", g.timeout)
	}
	short, err := NewClient(Options{CheckHost: allowAnyHost, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if g := short.Transport.(*checkedTransport).policy.g; short.Timeout != time.Second || g.timeout != time.Second {
		t.Fatalf("a 1s client has timeout %v and connect timeout %v", short.Timeout, g.timeout)
	}
}

// HTTPS goes through the same guarded dial (there is no separate TLS dialer).
func TestClientHTTPSUsesTheGuardedDial(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "tls ok")
	}))
	defer srv.Close()
	addr := serverAddr(srv)
	fn := newFakeNet(t, map[string]string{addr: addr})
	c := newTestClient(t, newFakeResolver(nil), fn, func(o *Options) { o.AllowLocal = []string{addr} })
	c.Transport.(*checkedTransport).next.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig

	body, err := get(context.Background(), c, srv.URL)
	if err != nil || body != "tls ok" {
		t.Fatalf("GET %s = %q, %v", srv.URL, body, err)
	}
	if got := fn.addresses(); !slices.Equal(got, []string{addr}) {
		t.Fatalf("dialled %v", got)
	}
}

// A URL carrying credentials is refused before anything is asked or dialled,
// and the refusal does not repeat the password.
func TestClientRefusesUserinfo(t *testing.T) {
	for _, u := range []string{"http://user:pw@api.example/", "https://api.example@evil.example/", "http://@api.example/"} {
		var seen []string
		fn := newFakeNet(t, nil)
		c := newTestClient(t, newFakeResolver(nil), fn, func(o *Options) {
			o.CheckHost = func(h string) error { seen = append(seen, h); return nil }
		})
		_, err := get(context.Background(), c, u)
		if !errors.Is(err, ErrDenied) || strings.Contains(err.Error(), "pw@") || !strings.Contains(err.Error(), "userinfo") {
			t.Fatalf("GET %s: err = %v, want ErrDenied naming userinfo, without the password", u, err)
		}
		if len(seen) != 0 || len(fn.addresses()) != 0 {
			t.Fatalf("GET %s: asked net %v, dialled %v", u, seen, fn.addresses())
		}
	}
}
