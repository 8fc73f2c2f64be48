package metrics

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/testutil"
)

// TestNATSRouteRefusalsAreExported: a kernel embedding a NATS node on
// loopback (its cluster secret created under its home) refuses a route
// peer presenting no secret, and the scrape shows the refusal as
// astrid_nats_routes_total{outcome="refused"}, with the node's other
// counters.
func TestNATSRouteRefusalsAreExported(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := config.Default()
	cfg.NATS = config.NATS{HostID: "hostA", ClusterName: "t", Listen: addr}
	k, err := kernel.Boot(context.Background(), kernel.Options{Home: t.TempDir(), Workspace: t.TempDir(), Config: cfg,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Builtins: []kernel.Builtin{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	srv := httptest.NewServer(New(k))
	t.Cleanup(srv.Close)
	if v := value(scrape(t, srv.URL), "astrid_nats_routes_total", "outcome", "refused"); v != 0 {
		t.Fatalf("refused routes before any peer: %v", v)
	}

	conn, err := net.DialTimeout("tcp", addr, waitLimit)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(waitLimit)); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "INFO ") {
		t.Fatalf("the node's first line: %q, %v", line, err)
	}
	fmt.Fprintf(conn, "CONNECT {\"verbose\":false,\"pedantic\":false,\"name\":\"NROGUE\",\"cluster\":\"t\"}\r\nPING\r\n")
	if got, _ := io.ReadAll(r); !strings.Contains(string(got), "Authorization Violation") {
		t.Fatalf("the node answered:\n%s", got)
	}
	testutil.WaitFor(t, waitLimit, "the refusal to be exported", func() bool {
		return value(scrape(t, srv.URL), "astrid_nats_routes_total", "outcome", "refused") == 1
	})
	fams := scrape(t, srv.URL)
	for _, name := range []string{"astrid_nats_clients_refused_total", "astrid_nats_permission_violations_total"} {
		if v := value(fams, name); v != 0 {
			t.Errorf("%s = %v, want 0", name, v)
		}
	}
	if v := value(fams, "astrid_nats_routes_total", "outcome", "joined"); v != 0 {
		t.Errorf("joined routes = %v, want 0", v)
	}
}
