package natsbus

import (
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/astrid-go/astrid/internal/bus/natsbus/natsbustest"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
)

// abandon closes every connection of the host's transport without a word,
// as a SIGKILLed daemon's would close: no leaving announcement, no drain.
func (t *Transport) abandon() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.presenceConn.Close()
	if t.recv != nil {
		t.recv.conn.Close()
	}
	for _, a := range t.capsules {
		a.conn.Close()
	}
}

// noLostCall fails if a request is answered as lost within a second (four
// rounds of liveness questions). A negative, so the wait is the thing under test: a
// slow machine only makes fewer questions fit in it.
func noLostCall(t *testing.T, lost chan LostRequest, why string) {
	t.Helper()
	select {
	case c := <-lost:
		t.Fatalf("%s: request answered as lost: %+v", why, c)
	case <-time.After(4 * aliveInterval):
	}
}

// TestAKilledHostIsTakenAsLostByNoResponders: on an external cluster in operator
// mode there is no route to watch. Host A asks after host B, which runs its
// call: while B answers, nothing happens; once B's connections close
// without a word (a SIGKILLed daemon), the cluster answers A's questions "no
// responders" and the call is answered as lost, naming the closed
// connection — not three presence intervals of silence later.
func TestAKilledHostIsTakenAsLostByNoResponders(t *testing.T) {
	ns, acc := natsbustest.OperatorServer(t)
	dirA, dirB := t.TempDir(), t.TempDir()
	mintInto(t, acc, dirA, "hostA", "router", []string{"tool.v1.execute.*", ipc.ToolExecuteResultTopic}, nil)
	mintInto(t, acc, dirB, "hostB", "tool", []string{"tool.v1.execute.echo.result"}, []string{"tool.v1.execute.echo"})
	lost := make(chan LostRequest, 16)
	a := newExternalHost(t, ns, "hostA", hostCreds(t, acc, dirA, "hostA"), dirA, func(o *Options) { o.RequestLost = func(r LostRequest) { lost <- r } })
	b := newExternalHost(t, ns, "hostB", hostCreds(t, acc, dirB, "hostB"), dirB)
	must(t, a.Attach("router", []string{"tool.v1.execute.*", ipc.ToolExecuteResultTopic}, nil, nil))
	must(t, b.Attach("tool", []string{"tool.v1.execute.echo.result"}, []string{"tool.v1.execute.echo"}, []string{"tool.v1.execute.echo"}))
	testutil.WaitFor(t, guard, "host A to hear host B's provider", func() bool { return hearsProvider(a.Transport, "hostB") })
	call(a.Transport, "c1", 1)
	taken(t, a.Transport, 1)
	noLostCall(t, lost, "host B answers A's liveness questions")

	b.abandon()
	checkLost(t, lostRequests(t, lost, 1)[0], "c1", "hostB", LostGone)
	if hearsProvider(a.Transport, "hostB") {
		t.Fatal("host B still listed after it was lost")
	}
}

// TestLivenessOnTheEmbeddedServer: the in-process authenticator gives the
// presence connection the same subjects: a host whose connections close
// is taken as lost by liveness questions there too.
func TestLivenessOnTheEmbeddedServer(t *testing.T) {
	ns, auth := embedded(t)
	a, lost := callerHost(t, ns, auth, "hostA")
	b := providerHost(t, ns, auth, "hostB")
	call(a, "c1", 1)
	taken(t, a, 1)
	noLostCall(t, lost, "host B answers A's liveness questions")
	b.abandon()
	checkLost(t, lostRequests(t, lost, 1)[0], "c1", "hostB", LostGone)
}

// TestALivenessAnswerGoesOnlyIntoAHostInbox: a host holding its own presence
// credentials sends host B a liveness question whose reply subject is a capsule's
// subject, hoping B's answer (which the broker's response permission lets
// out) lands there as a forgery. B answers only into a host's inbox.
func TestALivenessAnswerGoesOnlyIntoAHostInbox(t *testing.T) {
	ns, acc := natsbustest.OperatorServer(t)
	dirB, dirC := t.TempDir(), t.TempDir()
	b := newExternalHost(t, ns, "hostB", hostCreds(t, acc, dirB, "hostB"), dirB)
	_ = b
	rogue, err := nats.Connect(ns.ClientURL(), nats.UserCredentials(hostCreds(t, acc, dirC, "hostC")))
	if err != nil {
		t.Fatal(err)
	}
	defer rogue.Close()
	// One channel for both subscriptions: the client's reader fills it in
	// the order the server sent.
	landed := make(chan *nats.Msg, 8)
	forged := SubjectPrefix + ".router." + ipc.ToolExecuteResultTopic
	inbox := hostInbox("hostC") + ".alive.hostB"
	for _, subject := range []string{forged, inbox} {
		if _, err := rogue.ChanSubscribe(subject, landed); err != nil {
			t.Fatal(err)
		}
	}
	must(t, rogue.Flush())
	// The forged reply first, then a true question: B answers in order, so once
	// the true answer is in, a forged one would have come before it.
	must(t, rogue.PublishMsg(&nats.Msg{Subject: aliveSubject("hostB"), Reply: forged}))
	must(t, rogue.PublishMsg(&nats.Msg{Subject: aliveSubject("hostB"), Reply: inbox}))
	if m := testutil.WaitForRecv(t, guard, "host B to answer the true question", landed); m.Subject != inbox {
		t.Fatalf("host B answered on %s", m.Subject)
	}
}

// TestHostCredentialsAllowLivenessQuestions: what astrid nats creds --host-only mints
// lets the host answer liveness questions and hear the answers, and no more.
func TestHostCredentialsAllowLivenessQuestions(t *testing.T) {
	acc, _ := nkeys.CreateAccount()
	creds, err := MintHostCreds(acc, "hostA", 0)
	if err != nil {
		t.Fatal(err)
	}
	token, err := jwt.ParseDecoratedJWT(creds.File)
	if err != nil {
		t.Fatal(err)
	}
	claims, err := jwt.DecodeUserClaims(token)
	if err != nil {
		t.Fatal(err)
	}
	if want := responseGrant(); claims.Resp == nil || claims.Resp.MaxMsgs != want.MaxMsgs || claims.Resp.Expires != want.Expires {
		t.Fatalf("response permission %+v, want %+v", claims.Resp, want)
	}
	for _, s := range []string{"astrid_hosts.*.alive", "astrid_hosts.hostA"} {
		if !claims.Pub.Allow.Contains(s) {
			t.Errorf("may not publish %s", s)
		}
	}
	for _, s := range []string{"astrid_hosts.hostA.alive", "astrid_hosts.hostA.inbox.>"} {
		if !claims.Sub.Allow.Contains(s) {
			t.Errorf("may not subscribe %s", s)
		}
	}
	if len(claims.Pub.Allow) != 2 {
		t.Errorf("may publish %v, want only its presence and liveness questions", claims.Pub.Allow)
	}
}

// TestARequestNoHostTookIsAskedAfterOnItsHosts: a host may go down as it
// takes a request, before its answer that it took it leaves. A request no
// host said it took is asked after on the hosts announcing its
// interceptor, and answered once they are all gone.
func TestARequestNoHostTookIsAskedAfterOnItsHosts(t *testing.T) {
	ns, auth := embedded(t)
	a, lost := callerHost(t, ns, auth, "hostA")
	b := providerHost(t, ns, auth, "hostB")
	testutil.WaitFor(t, guard, "host A to hear host B's provider", func() bool { return hearsProvider(a, "hostB") })
	b.abandon() // still announced for three presence intervals
	call(a, "c1", 1)
	checkLost(t, lostRequests(t, lost, 1)[0], "c1", "hostB", LostGone)
}
