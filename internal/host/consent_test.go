package host

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
)

const localClient = `
[package]
name = "local-client"
version = "0.1.0"
[capabilities]
net_connect = ["127.0.0.1:*"]
`

// localServer accepts and closes connections on loopback.
func localServer(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

func connect(c *Capsule, principal string, port int) error {
	call, _ := c.Begin(context.Background(), principal)
	defer call.End()
	h, err := call.NetConnect("127.0.0.1", port)
	if err == nil {
		_ = call.NetClose(h)
	}
	return err
}

// A connection to a loopback address the grant names and the operator's
// allowlist does not is put to the person: denied, it is refused with the
// reason; allowed once, it goes ahead and the next one asks again;
// allowed always, it is not asked again (for that capsule and principal);
// as many connections at once as the capsule may hold ask one question.
func TestALocalAddressIsPutToThePerson(t *testing.T) {
	f, _ := approvalFixture(t, 0)
	c := f.capsule(t, localClient)
	alice := listen(t, f, "alice")
	port := localServer(t)
	target := "127.0.0.1:" + strconv.Itoa(port)

	answer := func(decision string) <-chan error {
		done := make(chan error, 1)
		go func() { done <- connect(c, "alice", port) }()
		q := alice.next()
		if q.Action != ConsentAction || q.Resource != target {
			t.Errorf("question %+v, want %q about %s", q, ConsentAction, target)
		}
		alice.answer(testFrontend, "alice", q.RequestID, decision)
		return done
	}
	err := <-answer(ipc.DecisionDeny)
	if hostapi.CodeOf(err) != hostapi.CodeDenied || !strings.Contains(err.Error(), "the person did not allow local-client to connect to the local address "+target) {
		t.Fatalf("denied: %v", err)
	}
	if err := <-answer(ipc.DecisionApprove); err != nil {
		t.Fatalf("approved once: %v", err)
	}
	if err := <-answer(ipc.DecisionApproveAlways); err != nil {
		t.Fatalf("approved always: %v", err)
	}
	if err := connect(c, "alice", port); err != nil {
		t.Fatalf("after always: %v", err)
	}

	// bob has no allowance: a flood of connections, one question (allowed
	// for the session, so one that starts after the answer is not asked).
	bob := listen(t, f, "bob")
	var wg sync.WaitGroup
	errs := make(chan error, hostapi.MaxNetHandles)
	for range hostapi.MaxNetHandles {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- connect(c, "bob", port) }()
	}
	q := bob.next()
	bob.answer(testFrontend, "bob", q.RequestID, ipc.DecisionApproveSession)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a connection of the flood: %v", err)
		}
	}
	select {
	case q := <-bob.questions:
		t.Fatalf("the flood asked a second question: %+v", q)
	default:
	}
}

// With no one to ask, a local address is refused, saying how the operator
// allows it.
func TestALocalAddressIsRefusedWithNoOneToAsk(t *testing.T) {
	f := newFixture(t)
	c := f.capsule(t, localClient)
	port := localServer(t)
	err := connect(c, "alice", port)
	if hostapi.CodeOf(err) != hostapi.CodeDenied || !strings.Contains(err.Error(), "[egress] allow") {
		t.Fatalf("headless: %v", err)
	}
}

// The HTTP call puts a local address to the person the same way.
func TestALocalURLIsPutToThePerson(t *testing.T) {
	f, _ := approvalFixture(t, 0)
	c := f.capsule(t, `
[package]
name = "local-fetch"
version = "0.1.0"
[capabilities]
net = ["127.0.0.1"]
`)
	alice := listen(t, f, "alice")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("local")) }))
	defer srv.Close()
	fetch := func() <-chan error {
		done := make(chan error, 1)
		go func() {
			call, _ := c.Begin(context.Background(), "alice")
			defer call.End()
			resp, err := call.HTTPDo(hostapi.HTTPRequest{Method: "GET", URL: srv.URL})
			if err == nil && string(resp.Body) != "local" {
				err = errors.New("body " + string(resp.Body))
			}
			done <- err
		}()
		return done
	}
	done := fetch()
	q := alice.next()
	if q.Action != ConsentAction || q.Resource != strings.TrimPrefix(srv.URL, "http://") {
		t.Fatalf("question %+v", q)
	}
	alice.answer(testFrontend, "alice", q.RequestID, ipc.DecisionDeny)
	if err := <-done; err == nil || !strings.Contains(err.Error(), "did not allow") {
		t.Fatalf("denied fetch: %v", err)
	}
	done = fetch()
	alice.answer(testFrontend, "alice", alice.next().RequestID, ipc.DecisionApprove)
	if err := <-done; err != nil {
		t.Fatalf("approved fetch: %v", err)
	}
}
