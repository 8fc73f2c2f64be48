package natsbus

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/astrid-go/astrid/internal/bus/natsbus/natsbustest"
	"github.com/astrid-go/astrid/internal/testutil"
)

// dialCreds connects with a minted credentials file, recording the
// permissions violations the server reports.
func dialCreds(t *testing.T, ns *server.Server, creds CapsuleCreds) (*nats.Conn, func() int, error) {
	t.Helper()
	token, err := jwt.ParseDecoratedJWT(creds.File)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := jwt.ParseDecoratedNKey(creds.File)
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := kp.Seed()
	var mu sync.Mutex
	violations := 0
	nc, err := nats.Connect(ns.ClientURL(), nats.UserJWTAndSeed(token, string(seed)), nats.MaxReconnects(0),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			if errors.Is(err, nats.ErrPermissionViolation) {
				mu.Lock()
				violations++
				mu.Unlock()
			}
		}))
	if err != nil {
		return nil, nil, err
	}
	t.Cleanup(nc.Close)
	return nc, func() int { mu.Lock(); defer mu.Unlock(); return violations }, nil
}

// TestMintedCredentialsAllowExactlyTheGrants: against a server in operator
// mode, a tool capsule's minted credentials publish only its own result
// topic as itself and subscribe only its own call topic; each forgery is
// refused by the server, and a watcher hears only the honest publish.
func TestMintedCredentialsAllowExactlyTheGrants(t *testing.T) {
	ns, acc := natsbustest.OperatorServer(t)
	tool, err := MintCapsuleCreds(acc, "hostB", "tool", []string{"tool.v1.execute.echo.result"}, []string{"tool.v1.execute.echo"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(tool.File), "BEGIN NATS USER JWT") || !strings.Contains(string(tool.File), "BEGIN USER NKEY SEED") {
		t.Fatalf("not a credentials file:\n%s", tool.File)
	}
	router, err := MintCapsuleCreds(acc, "hostA", "router", nil, []string{"tool.v1.execute.*.result"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	watcher, _, err := dialCreds(t, ns, router)
	if err != nil {
		t.Fatal(err)
	}
	heard, err := watcher.SubscribeSync(SubjectPrefix + ".*.tool.v1.execute.*.result")
	if err != nil {
		t.Fatal(err)
	}
	must(t, watcher.Flush())
	rogue, violations, err := dialCreds(t, ns, tool)
	if err != nil {
		t.Fatal(err)
	}
	forgeries := []struct{ name, subject string }{
		{"as another capsule", "astrid.fs.tool.v1.execute.echo.result"},
		{"another tool's result", "astrid.tool.tool.v1.execute.read_file.result"},
		{"as the kernel", "astrid.kernel.tool.v1.execute.echo.result"},
		{"outside astrid.", "tool.v1.execute.echo.result"},
		{"a presence subject", PresencePrefix + ".hostA"},
	}
	for _, f := range forgeries {
		must(t, rogue.Publish(f.subject, []byte(`"forged"`)))
	}
	for _, subject := range []string{">", "astrid.>", "astrid.*.tool.v1.execute.*.result", PresencePrefix + ".*"} {
		if _, err := rogue.Subscribe(subject, func(*nats.Msg) {}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := rogue.Subscribe(SubjectPrefix+".*.tool.v1.execute.echo", func(*nats.Msg) {}); err != nil {
		t.Fatal(err)
	}
	must(t, rogue.Publish("astrid.tool.tool.v1.execute.echo.result", []byte(`"honest"`)))
	must(t, rogue.Flush())
	m, err := heard.NextMsg(guard)
	if err != nil {
		t.Fatal(err)
	}
	if m.Subject != "astrid.tool.tool.v1.execute.echo.result" || string(m.Data) != `"honest"` {
		t.Fatalf("the watcher heard %s %s: a forgery went through", m.Subject, m.Data)
	}
	want := len(forgeries) + 4
	testutil.WaitFor(t, guard, "the server to refuse every forgery", func() bool { return violations() >= want })
	if got := violations(); got != want {
		t.Fatalf("%d violations, want %d (the capsule's own grant was refused?)", got, want)
	}
}

// TestMintRefusesWhatNATSCannotCarry: a key NATS cannot carry, a bad host
// id, or a key that is not an account's refuses the mint.
func TestMintRefusesWhatNATSCannotCarry(t *testing.T) {
	acc, _ := nkeys.CreateAccount()
	op, _ := nkeys.CreateOperator()
	cases := []struct {
		name      string
		key       nkeys.KeyPair
		host, id  string
		pub, sub  []string
		wantInErr string
	}{
		{"bad publish key", acc, "h", "c", []string{"a.>"}, nil, "a.>"},
		{"bad subscribe key", acc, "h", "c", nil, []string{"a b"}, "a b"},
		{"bad host", acc, "h.x", "c", nil, nil, "host id"},
		{"bad capsule id", acc, "h", "c.x", nil, nil, "c.x"},
		{"operator key signs users", op, "h", "c", nil, nil, "not an account key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := MintCapsuleCreds(tc.key, tc.host, tc.id, tc.pub, tc.sub, 0)
			if err == nil || !strings.Contains(err.Error(), tc.wantInErr) {
				t.Fatalf("err %v, want one naming %q", err, tc.wantInErr)
			}
		})
	}
}
