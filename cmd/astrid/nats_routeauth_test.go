package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/testutil"
)

// TestDaemonOnLoopbackRefusesRoutesWithoutTheSecret: `astrid daemon
// --nats-listen 127.0.0.1:PORT` with no cluster secret configured creates
// $ASTRID_HOME/nats/cluster.secret (0600) and requires it of every route: a
// process dialing the loopback route port and sending a route CONNECT
// without it is refused, and `astrid status` counts the refusal. Restarted
// on the same home, the daemon keeps the secret.
func TestDaemonOnLoopbackRefusesRoutesWithoutTheSecret(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	d := startDaemonWith(t, home, ws, "hostA", []string{"--nats-listen", addr})
	path := config.Layout(home).ClusterSecret
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("%s: mode %04o, want 0600", path, info.Mode().Perm())
	}
	secret, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	conn, err := net.DialTimeout("tcp", addr, daemonPatience)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(daemonPatience)); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "INFO ") {
		t.Fatalf("the node's first line: %q, %v", line, err)
	}
	fmt.Fprintf(conn, "CONNECT {\"verbose\":false,\"pedantic\":false,\"tls_required\":false,\"headers\":true,\"name\":\"NROGUE\",\"cluster\":\"astrid\"}\r\nRS+ $G astrid.>\r\nPING\r\n")
	got, _ := io.ReadAll(r)
	if !strings.Contains(string(got), "-ERR 'Authorization Violation'") || strings.Contains(string(got), "PONG") {
		t.Fatalf("the daemon's node answered a route without the secret:\n%s", got)
	}
	testutil.WaitFor(t, daemonPatience, "status to count the refusal", func() bool {
		rep, _ := statusOf(t, home)
		return rep.Status != nil && rep.NATS != nil && rep.NATS.Stats.Node != nil && rep.NATS.Stats.Node.RoutesRefused >= 1
	})
	if out, code := runProcess(t, home, "status"); code != 0 || !strings.Contains(out, "nats node: routes joined 0, refused 1") {
		t.Fatalf("status (exit %d):\n%s", code, out)
	}

	if err := d.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, daemonPatience, "the daemon to stop", func() bool {
		c, err := dialDaemon(t.Context(), home)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	startDaemonWith(t, home, ws, "hostA", []string{"--nats-listen", addr})
	if again, err := os.ReadFile(path); err != nil || string(again) != string(secret) {
		t.Fatalf("the secret changed across a restart (%v)", err)
	}
}
