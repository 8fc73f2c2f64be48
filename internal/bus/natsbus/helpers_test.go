package natsbus

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
)

// guard turns a hang into a failure; no test asserts a duration.
const guard = 30 * time.Second

// embedded starts an in-process-only server for one test.
func embedded(t testing.TB) (*server.Server, *Authenticator) {
	t.Helper()
	return startEmbedded(t, ServerOptions{})
}

func startEmbedded(t testing.TB, o ServerOptions) (*server.Server, *Authenticator) {
	t.Helper()
	auth := NewAuthenticator(nil)
	ns, err := StartServer(o, auth)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ns.Shutdown()
		ns.WaitForShutdown()
	})
	return ns, auth
}

// testHost is one host's transport whose received envelopes are collected.
type testHost struct {
	*Transport
	got chan *ipc.Envelope
}

func newTestHost(t testing.TB, ns *server.Server, auth *Authenticator, id string) *testHost {
	t.Helper()
	h := &testHost{got: make(chan *ipc.Envelope, 1024)}
	tr, err := New(Options{HostID: id, Server: ns, Auth: auth, Deliver: func(e *ipc.Envelope, _ func(string) bool) error {
		h.got <- e
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.Close)
	h.Transport = tr
	return h
}

func (h *testHost) attach(t testing.TB, id string, publish, subscribe []string) {
	t.Helper()
	if err := h.Attach(id, publish, subscribe, nil); err != nil {
		t.Fatal(err)
	}
}

// next is the next envelope the host received.
func (h *testHost) next(t testing.TB) *ipc.Envelope {
	t.Helper()
	return testutil.WaitForRecv(t, guard, "an envelope", h.got)
}

// forward stamps and forwards an envelope as capsule from would publish it.
func (h *testHost) forward(from, topic, payload string) *ipc.Envelope {
	e := &ipc.Envelope{Topic: topic, Payload: json.RawMessage(payload), SourceID: from, Principal: "alice", Seq: 7, Timestamp: time.Now().UnixNano()}
	h.Forward(e)
	return e
}

// credentials are the user and secret the host's transport gave capsule
// id's connection: what an attacker who took over that host would hold.
func (h *testHost) credentials(t testing.TB, auth *Authenticator, id string) (user, secret string) {
	t.Helper()
	user = "capsule:" + h.HostID() + ":" + id
	auth.mu.RLock()
	defer auth.mu.RUnlock()
	c, ok := auth.users[user]
	if !ok {
		t.Fatalf("no credentials for %s", user)
	}
	return user, string(c.secret)
}

// rogue is a raw client recording the asynchronous errors the server sends it.
type rogue struct {
	*nats.Conn
	mu   sync.Mutex
	errs []error
}

// dialRogue connects in-process, or over loopback TCP when the server
// listens: a refused in-process connection waits out the server's write
// deadline (the refusal is written to a synchronous pipe the client is not
// reading yet), a TCP one is refused at once.
func dialRogue(t testing.TB, ns *server.Server, user, secret string) (*rogue, error) {
	r := &rogue{}
	via := nats.InProcessServer(ns)
	if ns.Addr() != nil {
		via = func(*nats.Options) error { return nil }
	}
	nc, err := nats.Connect(ns.ClientURL(), via, nats.UserInfo(user, secret), nats.MaxReconnects(0),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			r.mu.Lock()
			r.errs = append(r.errs, err)
			r.mu.Unlock()
		}))
	if err != nil {
		return nil, err
	}
	t.Cleanup(nc.Close)
	r.Conn = nc
	return r, nil
}

// violations is how many permissions violations the server reported.
func (r *rogue) violations() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, err := range r.errs {
		if errors.Is(err, nats.ErrPermissionViolation) {
			n++
		}
	}
	return n
}

// decode is splitFrame then decodeEnvelope, as receive does, for tests and
// the fuzz target.
func decode(subject string, data []byte) (host string, ran []byte, e *ipc.Envelope, err error) {
	h, ran, body, err := splitFrame(subject, data)
	if err != nil {
		return "", nil, nil, err
	}
	e, err = decodeEnvelope(subject, body, string(h))
	return string(h), ran, e, err
}

// Refused is the number of connections a refused so far.
func (a *Authenticator) Refused() uint64 { return a.refused.Load() }
