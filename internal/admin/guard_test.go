package admin

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// serve starts a server on 127.0.0.1 whose only page answers "the page".
func serve(t *testing.T) *Server {
	t.Helper()
	s, err := New(Options{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	s.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "the page") }))
	s.Serve()
	t.Cleanup(func() {
		if err := s.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return s
}

// noRedirects is a client that shows redirects rather than following them.
func noRedirects() *http.Client {
	return &http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport:     &http.Transport{DisableKeepAlives: true},
	}
}

// Requests as an attacker would make them: from a page of another origin
// (a wrong Origin, a cross-site fetch), through a rebound DNS name (a
// wrong Host) or without the token. Each is refused, and every answer,
// refusals included, forbids a Referer.
func TestGuardRefusesAttacks(t *testing.T) {
	s := serve(t)
	_, port, _ := net.SplitHostPort(s.Addr())
	own := "127.0.0.1:" + port
	otherPort := "127.0.0.1:1"
	if port == "1" {
		otherPort = "127.0.0.1:2"
	}
	bearer := "Bearer " + s.Token()
	cookie := s.cookie + "=" + s.Token()
	for _, tc := range []struct {
		name    string
		method  string
		host    string
		query   string
		headers map[string]string
		want    int
	}{
		{name: "no token", want: http.StatusUnauthorized},
		{name: "wrong token in the query", query: "token=guess", want: http.StatusUnauthorized},
		{name: "empty token in the query", query: "token=", want: http.StatusUnauthorized},
		{name: "token's prefix in the query", query: "token=" + s.Token()[:20], want: http.StatusUnauthorized},
		{name: "wrong bearer token", headers: map[string]string{"Authorization": "Bearer guess"}, want: http.StatusUnauthorized},
		{name: "token under another scheme", headers: map[string]string{"Authorization": "Basic " + s.Token()}, want: http.StatusUnauthorized},
		{name: "wrong cookie", headers: map[string]string{"Cookie": s.cookie + "=guess"}, want: http.StatusUnauthorized},
		{name: "another port's cookie", headers: map[string]string{"Cookie": "astrid_admin_1=" + s.Token()}, want: http.StatusUnauthorized},
		{name: "right token in a POST query", method: http.MethodPost, query: "token=" + s.Token(), want: http.StatusUnauthorized},
		{name: "rebound name", host: "evil.example:" + port, headers: map[string]string{"Authorization": bearer}, want: http.StatusForbidden},
		{name: "loopback-looking name", host: "127.0.0.1.evil.example:" + port, headers: map[string]string{"Authorization": bearer}, want: http.StatusForbidden},
		{name: "localhost subdomain", host: "localhost.evil.example:" + port, headers: map[string]string{"Authorization": bearer}, want: http.StatusForbidden},
		{name: "right host, wrong port", host: otherPort, headers: map[string]string{"Authorization": bearer}, want: http.StatusForbidden},
		{name: "host without port", host: "127.0.0.1", headers: map[string]string{"Authorization": bearer}, want: http.StatusForbidden},
		{name: "rebound name with the token in the query", host: "evil.example:" + port, query: "token=" + s.Token(), want: http.StatusForbidden},
		{name: "foreign origin", headers: map[string]string{"Authorization": bearer, "Origin": "http://evil.example"}, want: http.StatusForbidden},
		{name: "foreign origin, own port", headers: map[string]string{"Cookie": cookie, "Origin": "http://evil.example:" + port}, want: http.StatusForbidden},
		{name: "null origin", headers: map[string]string{"Cookie": cookie, "Origin": "null"}, want: http.StatusForbidden},
		{name: "own host, other port origin", headers: map[string]string{"Cookie": cookie, "Origin": "http://" + otherPort}, want: http.StatusForbidden},
		{name: "https origin", headers: map[string]string{"Cookie": cookie, "Origin": "https://" + own}, want: http.StatusForbidden},
		{name: "cross-site fetch", headers: map[string]string{"Cookie": cookie, "Sec-Fetch-Site": "cross-site"}, want: http.StatusForbidden},
		// The legitimate requests, for contrast: each check can pass.
		{name: "bearer token", headers: map[string]string{"Authorization": bearer}, want: http.StatusOK},
		{name: "cookie", headers: map[string]string{"Cookie": cookie}, want: http.StatusOK},
		{name: "own origin", headers: map[string]string{"Cookie": cookie, "Origin": "http://" + own}, want: http.StatusOK},
		{name: "localhost", host: "LOCALHOST:" + port, headers: map[string]string{"Cookie": cookie, "Origin": "http://localhost:" + port}, want: http.StatusOK},
		{name: "same-origin fetch", headers: map[string]string{"Cookie": cookie, "Sec-Fetch-Site": "same-origin"}, want: http.StatusOK},
		{name: "token in the query", query: "token=" + s.Token(), want: http.StatusSeeOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			req, err := http.NewRequest(method, "http://"+s.Addr()+"/?"+tc.query, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			res, err := noRedirects().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != tc.want {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, tc.want, body)
			}
			if got := res.Header.Get("Referrer-Policy"); got != "no-referrer" {
				t.Errorf("Referrer-Policy %q", got)
			}
			if tc.want != http.StatusOK && strings.Contains(string(body), "the page") {
				t.Errorf("a refused request got the page: %s", body)
			}
			if tc.want != http.StatusSeeOther && res.Header.Get("Set-Cookie") != "" {
				t.Errorf("a cookie was set: %s", res.Header.Get("Set-Cookie"))
			}
		})
	}
}

// The token in the URL is traded once for a cookie (HttpOnly,
// SameSite=Strict), and the browser is sent to the same URL without it, so
// the token neither stays in the address bar nor leaks in a Referer
// (which Referrer-Policy forbids anyway).
func TestTokenTradedForCookie(t *testing.T) {
	s := serve(t)
	res, err := noRedirects().Get("http://" + s.Addr() + "/turns?x=1&token=" + url.QueryEscape(s.Token()))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("status %d", res.StatusCode)
	}
	if loc := res.Header.Get("Location"); loc != "/turns?x=1" {
		t.Fatalf("redirected to %q, want the URL without its token", loc)
	}
	cookies := res.Cookies()
	if len(cookies) != 1 {
		t.Fatalf("cookies %v", cookies)
	}
	c := cookies[0]
	if c.Value != s.Token() || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Name != s.cookie {
		t.Fatalf("cookie %+v", c)
	}
	if !strings.HasSuffix(c.Name, fmt.Sprint(s.ln.Addr().(*net.TCPAddr).Port)) {
		t.Fatalf("cookie %s does not name the port: two daemons' cookies on 127.0.0.1 would overwrite each other", c.Name)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+s.Addr()+"/turns?x=1", nil)
	req.AddCookie(c)
	res, err = noRedirects().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || string(body) != "the page" {
		t.Fatalf("with the cookie: %d %s", res.StatusCode, body)
	}
	if got := res.Header.Get("Content-Security-Policy"); !strings.Contains(got, "default-src 'self'") {
		t.Fatalf("CSP %q", got)
	}
}

// The server listens on loopback only, whatever it is told.
func TestListenLoopbackOnly(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:0", true},
		{"127.0.0.2:0", true},
		{"[::1]:0", true},
		{"localhost:0", true},
		{"LocalHost:8088", true},
		{"0.0.0.0:0", false},
		{"[::]:0", false},
		{":0", false},
		{"192.168.1.10:0", false},
		{"example.com:0", false},
		{"127.0.0.1.nip.io:0", false},
		{"localhost.evil.example:0", false},
		{"[::ffff:10.0.0.1]:0", false},
		{"127.0.0.1", false},
		{"127.0.0.1:http", false},
		{"127.0.0.1:-1", false},
		{"127.0.0.1:70000", false},
	} {
		err := CheckListen(tc.addr)
		if (err == nil) != tc.ok {
			t.Errorf("CheckListen(%q) = %v, want ok=%v", tc.addr, err, tc.ok)
		}
		if !tc.ok {
			if s, err := New(Options{Listen: tc.addr}); err == nil {
				s.Close(context.Background())
				t.Errorf("New(%q) listened", tc.addr)
			}
		}
	}
}

// Close ends the requests still running (a stream that never finishes
// by itself), so a daemon's shutdown does not wait for a browser tab.
func TestCloseEndsStreams(t *testing.T) {
	s, err := New(Options{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	s.Handle("/stream", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		close(started)
		<-r.Context().Done()
	}))
	s.Serve()
	req, _ := http.NewRequest(http.MethodGet, "http://"+s.Addr()+"/stream", nil)
	req.Header.Set("Authorization", "Bearer "+s.Token())
	client := noRedirects()
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	client.CloseIdleConnections()
}
