package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

// staticResolver answers fixed names.
type staticResolver map[string]string

func (r staticResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// proxyTo is a Proxy whose grant names granted.test and metadata.test
// (resolved to loopback and to the cloud metadata address), with the
// loopback endpoints given allowlisted as an operator would.
func proxyTo(t *testing.T, allowLocal ...string) *Proxy {
	t.Helper()
	d, err := NewDialer(Options{
		AllowLocal: allowLocal,
		Resolver:   staticResolver{"granted.test": "127.0.0.1", "metadata.test": "169.254.169.254"},
		CheckConn: func(host string, port int) error {
			if host == "granted.test" || host == "metadata.test" {
				return nil
			}
			return fmt.Errorf("%s is not in the capsule's net grant", host)
		},
		Logger: quietLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewProxy(d, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// connect sends CONNECT target through p and returns the status line and
// the connection (open when the tunnel was established).
func connect(t *testing.T, p *Proxy, target string) (int, string, net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", p.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	body := ""
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		body = string(b)
	}
	return res.StatusCode, body, c, br
}

func TestProxyTunnelsWhatTheGrantAllows(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		c, err := echo.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = io.Copy(c, c)
	}()
	port := echo.Addr().(*net.TCPAddr).Port
	p := proxyTo(t, echo.Addr().String())
	status, body, c, br := connect(t, p, fmt.Sprintf("granted.test:%d", port))
	if status != http.StatusOK {
		t.Fatalf("CONNECT granted.test: %d %s", status, body)
	}
	fmt.Fprint(c, "ping\n")
	line, err := br.ReadString('\n')
	if err != nil || line != "ping\n" {
		t.Fatalf("through the tunnel: %q %v", line, err)
	}
}

func TestProxyRefusesWhatTheGrantOrTheGuardRefuses(t *testing.T) {
	local, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	port := local.Addr().(*net.TCPAddr).Port
	p := proxyTo(t) // nothing allowlisted
	cases := []struct{ target, says string }{
		{fmt.Sprintf("elsewhere.test:%d", port), "not in the capsule's net grant"},
		{fmt.Sprintf("127.0.0.1:%d", port), "not in the capsule's net grant"},
		{fmt.Sprintf("granted.test:%d", port), "refused by Astrid's sandbox"}, // loopback, not allowlisted: the SSRF guard
		{"metadata.test:80", "refused by Astrid's sandbox"},
		{"[::1]:22", "not in the capsule's net grant"},
		{"granted.test:0", "refused"},
		{"no-port", "refused"},
	}
	for _, c := range cases {
		status, body, _, _ := connect(t, p, c.target)
		if status != http.StatusForbidden || !strings.Contains(body, c.says) {
			t.Errorf("CONNECT %s: %d %q; want 403 saying %q", c.target, status, body, c.says)
		}
	}
}

func TestProxyForwardsPlainHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s", r.URL.Path)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	p := proxyTo(t, u.Host)
	proxyURL, _ := url.Parse(p.URL())
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
	defer client.CloseIdleConnections()
	res, err := client.Get("http://granted.test:" + u.Port() + "/x")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(b) != "hello /x" {
		t.Fatalf("GET through the proxy: %d %q", res.StatusCode, b)
	}
	res, err = client.Get("http://elsewhere.test:" + u.Port() + "/x")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "net grant") {
		t.Fatalf("GET of a host outside the grant: %d %q", res.StatusCode, b)
	}
}

// Close ends a tunnel still open: nothing is left running (goleak checks
// the goroutines at the end of the package's tests).
func TestProxyCloseEndsTunnels(t *testing.T) {
	hold, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := hold.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	p := proxyTo(t, hold.Addr().String())
	status, _, c, _ := connect(t, p, fmt.Sprintf("granted.test:%d", hold.Addr().(*net.TCPAddr).Port))
	if status != http.StatusOK {
		t.Fatalf("CONNECT: %d", status)
	}
	up := <-accepted
	defer up.Close()
	p.Close()
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("the tunnel stayed open after Close")
	}
}
