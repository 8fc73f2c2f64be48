package natspeer

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// NATS is an embedded nats-server with no listener.
type NATS struct {
	srv   *server.Server
	conns []*nats.Conn
	tb    testing.TB
}

// StartNATS starts the server; it is shut down (with every connection made
// through Connect) when the benchmark ends.
func StartNATS(tb testing.TB) *NATS {
	tb.Helper()
	srv, err := server.NewServer(&server.Options{DontListen: true, NoLog: true, NoSigs: true})
	if err != nil {
		tb.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(5 * time.Second) {
		tb.Fatal("nats-server not ready")
	}
	n := &NATS{srv: srv, tb: tb}
	tb.Cleanup(n.stop)
	return n
}

// Connect opens an in-process client connection.
func (n *NATS) Connect(name string) *nats.Conn {
	n.tb.Helper()
	nc, err := nats.Connect("", nats.InProcessServer(n.srv), nats.Name(name))
	if err != nil {
		n.tb.Fatal(err)
	}
	n.conns = append(n.conns, nc)
	return nc
}

func (n *NATS) stop() {
	for _, nc := range n.conns {
		nc.Close()
	}
	n.srv.Shutdown()
	n.srv.WaitForShutdown()
}

// SubjectOf rewrites a route pattern's trailing `.*` (one or more segments)
// as NATS's `>`.
func SubjectOf(pattern string) string {
	if n := len(pattern); n > 2 && pattern[n-2:] == ".*" {
		return pattern[:n-1] + ">"
	}
	return pattern
}
