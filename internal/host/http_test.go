package host

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/astrid-go/astrid/hostapi"
)

const httpCapsule = `
[package]
name = "fetcher"
version = "0.1.0"
[capabilities]
net = ["localhost", "127.0.0.1", "example.com"]
`

// HTTP from a capsule goes through egress: allowed only for hosts in `net`,
// and to a local address only when the operator allowlisted it.
func TestHTTPGoesThroughTheGateAndEgress(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Seen", r.Header.Get("X-Ask"))
		_, _ = w.Write([]byte("pong"))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	_, port, _ := net.SplitHostPort(u.Host)

	f := newFixture(t)
	f.deps.Egress.AllowLocal = []string{"127.0.0.1:" + port}
	c := f.capsule(t, httpCapsule)
	call, _ := c.Begin(context.Background(), "alice")
	defer call.End()

	resp, err := call.HTTPDo(hostapi.HTTPRequest{URL: srv.URL + "/ping", Headers: map[string][]string{"X-Ask": {"hi"}}})
	if err != nil {
		t.Fatalf("allowlisted loopback server: %v", err)
	}
	if resp.Status != 200 || string(resp.Body) != "pong" || resp.Headers["X-Seen"][0] != "hi" {
		t.Errorf("response: %+v", resp)
	}

	// Not in `net`.
	if _, err := call.HTTPDo(hostapi.HTTPRequest{URL: "http://evil.test/"}); hostapi.CodeOf(err) != hostapi.CodeDenied {
		t.Errorf("host outside net: %v, want denied", err)
	}
	// In `net`, but a loopback port the operator did not allowlist.
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		t.Error("a request reached a loopback server that was not allowlisted")
	}))
	defer other.Close()
	if _, err := call.HTTPDo(hostapi.HTTPRequest{URL: other.URL}); hostapi.CodeOf(err) != hostapi.CodeDenied {
		t.Errorf("loopback not allowlisted: %v, want denied", err)
	}
	// Odd spellings of loopback are normalised, not a way around it: to
	// the port that is not allowlisted they are refused…
	_, otherPort, _ := net.SplitHostPort(other.Listener.Addr().String())
	for _, host := range []string{"2130706433", "0x7f.1", "017700000001", "127.1"} {
		if _, err := call.HTTPDo(hostapi.HTTPRequest{URL: "http://" + host + ":" + otherPort + "/"}); hostapi.CodeOf(err) != hostapi.CodeDenied {
			t.Errorf("%s:%s: %v, want denied", host, otherPort, err)
		}
	}
	// …and to the allowlisted one they reach the same server as 127.0.0.1.
	if resp, err := call.HTTPDo(hostapi.HTTPRequest{URL: "http://0x7f.1:" + port + "/"}); err != nil || string(resp.Body) != "pong" {
		t.Errorf("normalised spelling of the allowlisted endpoint: %v %q", err, resp.Body)
	}
}
