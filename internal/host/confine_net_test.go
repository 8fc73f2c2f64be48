package host

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/sandbox"
)

// TestConfinedNetworkGoesThroughTheEgressProxy: a process of a capsule
// with a net grant reaches a granted host through the proxy its
// environment names; a host outside the grant is refused by the proxy
// (saying so), and a direct connection, around the proxy, by the OS. A
// capsule without a net grant gets no proxy and no network.
func TestConfinedNetworkGoesThroughTheEgressProxy(t *testing.T) {
	if err := sandbox.Need(sandbox.ABI()); err != nil {
		t.Skipf("this kernel cannot confine: %v", err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "REACHED")
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	f := newFixture(t)
	// The operator lets capsules reach this one loopback endpoint.
	f.deps.Egress.AllowLocal = []string{u.Host}
	netCapsule := f.capsule(t, `
[package]
name = "fetcher"
version = "0.1.0"
[capabilities]
fs_read = ["*"]
net = ["127.0.0.1"]
host_process = ["curl"]
`)
	plain := f.capsule(t, `
[package]
name = "offline"
version = "0.1.0"
[capabilities]
fs_read = ["*"]
host_process = ["curl"]
`)
	curl := func(c *Capsule, args ...string) hostapi.ProcessResult {
		call, _ := c.Begin(context.Background(), "default")
		defer call.End()
		res, err := call.ProcessRun(hostapi.ProcessRequest{Program: "curl", Args: append([]string{"-sS", "--max-time", "20"}, args...)})
		if err != nil {
			t.Fatalf("curl %v: %v", args, err)
		}
		return res
	}
	if res := curl(netCapsule, srv.URL+"/"); res.ExitCode != 0 || string(res.Stdout) != "REACHED" {
		t.Fatalf("granted host through the proxy: %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	if res := curl(netCapsule, "-i", fmt.Sprintf("http://127.0.0.2:%s/", u.Port())); !strings.Contains(string(res.Stdout), "403") || !strings.Contains(string(res.Stdout), "refused by Astrid's sandbox") {
		t.Fatalf("a host outside the grant: %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	if res := curl(netCapsule, "--noproxy", "*", srv.URL+"/"); res.ExitCode == 0 || strings.Contains(string(res.Stdout), "REACHED") {
		t.Fatalf("around the proxy: %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	if res := curl(netCapsule, "--noproxy", "*", "http://"+other.Addr().String()+"/"); res.ExitCode == 0 {
		t.Fatalf("another port, around the proxy: %q", res.Stderr)
	}
	if res := curl(plain, srv.URL+"/"); res.ExitCode == 0 || strings.Contains(string(res.Stdout), "REACHED") {
		t.Fatalf("a capsule without a net grant: %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
}
