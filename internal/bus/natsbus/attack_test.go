package natsbus

import (
	"encoding/json"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
)

// attackBed is three hosts on one server: A runs capsule "pub" (publishes
// news.*), B runs "tool" (publishes tool.v1.execute.echo.result), and C
// runs "watch", which receives news.* and the tool's results.
type attackBed struct {
	a, b, c *testHost
	auth    *Authenticator
}

func newAttackBed(t *testing.T) (*attackBed, func(user, secret string) (*rogue, error)) {
	// The server also listens on loopback, where the rogue connects.
	ns, auth := startEmbedded(t, ServerOptions{Listen: "127.0.0.1:0"})
	bed := &attackBed{
		a:    newTestHost(t, ns, auth, "hostA"),
		b:    newTestHost(t, ns, auth, "hostB"),
		c:    newTestHost(t, ns, auth, "hostC"),
		auth: auth,
	}
	bed.a.attach(t, "pub", []string{"news.*"}, []string{"news.*"})
	bed.b.attach(t, "tool", []string{"tool.v1.execute.echo.result"}, []string{"tool.v1.execute.echo"})
	bed.c.attach(t, "watch", nil, []string{"news.*", "tool.v1.execute.*.result"})
	return bed, func(user, secret string) (*rogue, error) { return dialRogue(t, ns, user, secret) }
}

// expectOnlyMarker publishes an honest marker from capsule pub after the
// rogue's attempts were processed by the server (the rogue flushed), and
// checks that host C's next envelope is the marker: a forged envelope
// would have been delivered before it on C's one receiving connection.
func (bed *attackBed) expectOnlyMarker(t *testing.T, r *rogue) {
	t.Helper()
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	bed.a.forward("pub", "news.marker", `"marker"`)
	if e := bed.c.next(t); e.Topic != "news.marker" || e.SourceID != "pub" {
		t.Fatalf("host C received %s from %s before the marker: the forgery got through", e.Topic, e.SourceID)
	}
}

func TestBrokerRefusesForgedPublishes(t *testing.T) {
	bed, dial := newAttackBed(t)
	// The attacker holds everything host B holds: tool's credentials.
	user, secret := bed.b.credentials(t, bed.auth, "tool")
	for _, tc := range []struct {
		name, subject string
	}{
		{"publish as a capsule of another host", "astrid.pub.news.x"},
		{"publish a tool result as another capsule", "astrid.router.tool.v1.execute.echo.result"},
		{"publish outside its [publish] grants", "astrid.tool.news.x"},
		{"publish another tool's result", "astrid.tool.tool.v1.execute.rm.result"},
		{"publish as the kernel", "astrid.kernel.news.x"},
		{"publish outside the bus's subjects", "elsewhere.x"},
		{"publish on a system subject", "$SYS.REQ.SERVER.PING"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := dial(user, secret)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := json.Marshal(&ipc.Envelope{Topic: "news.x", SourceID: "pub", Payload: json.RawMessage(`"forged"`)})
			if err := r.Publish(tc.subject, body); err != nil {
				t.Fatal(err)
			}
			bed.expectOnlyMarker(t, r)
			testutil.WaitFor(t, guard, "the server to report the violation", func() bool { return r.violations() == 1 })
		})
	}
}

func TestBrokerRefusesSubscriptionsOutsideGrants(t *testing.T) {
	bed, dial := newAttackBed(t)
	user, secret := bed.b.credentials(t, bed.auth, "tool")
	for _, subject := range []string{
		"astrid.>",                        // everything
		"astrid.*.news.*",                 // another capsule's topics
		"astrid.pub.>",                    // one capsule's traffic
		"astrid.*.tool.v1.execute.*",      // every tool's requests
		"astrid.*.tool.v1.execute.echo.>", // wider than its key
		">",
	} {
		t.Run(subject, func(t *testing.T) {
			r, err := dial(user, secret)
			if err != nil {
				t.Fatal(err)
			}
			got := make(chan *nats.Msg, 16)
			if _, err := r.ChanSubscribe(subject, got); err != nil {
				t.Fatal(err)
			}
			testutil.WaitFor(t, guard, "the server to refuse the subscription", func() bool { return r.violations() == 1 })
			bed.expectOnlyMarker(t, r)
			if err := r.Flush(); err != nil {
				t.Fatal(err)
			}
			if len(got) != 0 {
				t.Fatalf("the refused subscription received %s", (<-got).Subject)
			}
		})
	}
	// Its own grant still works: the connection was not the problem.
	r, err := dial(user, secret)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.SubscribeSync("astrid.*.tool.v1.execute.echo"); err != nil {
		t.Fatal(err)
	}
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := r.violations(); n != 0 {
		t.Fatalf("its own grant was refused (%d violations)", n)
	}
}

func TestBrokerRefusesBadCredentials(t *testing.T) {
	bed, dial := newAttackBed(t)
	user, secret := bed.b.credentials(t, bed.auth, "tool")
	// Another last character, whatever the secret's was.
	wrong := secret[:len(secret)-1] + "0"
	if wrong == secret {
		wrong = secret[:len(secret)-1] + "1"
	}
	for _, tc := range []struct{ name, user, secret string }{
		{"wrong secret", user, wrong},
		{"another capsule's name with this secret", "capsule:hostA:pub", secret},
		{"unknown user", "capsule:hostZ:tool", secret},
		{"no credentials", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := bed.auth.Refused()
			if _, err := dial(tc.user, tc.secret); err == nil {
				t.Fatal("connected")
			}
			if bed.auth.Refused() != before+1 {
				t.Fatalf("refusal not counted")
			}
		})
	}
}

func TestDetachedCapsuleCredentialsAreRevoked(t *testing.T) {
	bed, dial := newAttackBed(t)
	user, secret := bed.b.credentials(t, bed.auth, "tool")
	bed.b.Detach("tool")
	if _, err := dial(user, secret); err == nil {
		t.Fatal("a detached capsule's credentials still connect")
	}
}

func TestReceiverCannotPublish(t *testing.T) {
	bed, dial := newAttackBed(t)
	bed.c.mu.Lock()
	user := bed.c.recv.user
	bed.c.mu.Unlock()
	bed.auth.mu.RLock()
	secret := string(bed.auth.users[user].secret)
	bed.auth.mu.RUnlock()
	r, err := dial(user, secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Publish("astrid.pub.news.x", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	bed.expectOnlyMarker(t, r)
	testutil.WaitFor(t, guard, "the violation", func() bool { return r.violations() == 1 })
}

// TestOwnViolationIsCounted: a publish the host's own connection makes
// outside the capsule's grants (dispatch would not let it; Forward is called
// directly here) is refused by the server and counted as a drop.
func TestOwnViolationIsCounted(t *testing.T) {
	bed, _ := newAttackBed(t)
	bed.b.forward("tool", "news.x", `"not granted"`)
	testutil.WaitFor(t, guard, "the violation to be counted", func() bool { return bed.b.Stats().Drops[DropPermission] == 1 })
	bed.a.forward("pub", "news.marker", `1`)
	if e := bed.c.next(t); e.Topic != "news.marker" {
		t.Fatalf("host C received %s from %s", e.Topic, e.SourceID)
	}
}

func TestNotAttachedIsCounted(t *testing.T) {
	bed, _ := newAttackBed(t)
	bed.a.forward("nobody", "news.x", `1`)
	if n := bed.a.Stats().Drops[DropNotAttached]; n != 1 {
		t.Fatalf("not-attached drops = %d", n)
	}
}
