package natsbus

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/astrid-go/astrid/internal/atomicfile"
	"github.com/astrid-go/astrid/internal/bus/natsbus/natsbustest"
	"github.com/astrid-go/astrid/internal/testutil"
	"github.com/astrid-go/astrid/ipc"
)

// writeCreds writes a credentials file as astrid nats creds --out does.
func writeCreds(t *testing.T, path string, file []byte, mode os.FileMode) {
	t.Helper()
	// Atomically: a host checking the file every 50 ms must not take up the
	// new content while it still has the old file's mode.
	if err := atomicfile.Write(path, file, mode); err != nil {
		t.Fatal(err)
	}
}

// hostCreds mints the host's own credentials (its receiver and presence
// connections), as astrid nats creds --host-only does, into dir.
func hostCreds(t *testing.T, acc nkeys.KeyPair, dir, host string) string {
	t.Helper()
	return hostCredsFor(t, acc, dir, host, time.Hour)
}

// hostCredsFor is hostCreds valid for ttl.
func hostCredsFor(t *testing.T, acc nkeys.KeyPair, dir, host string, ttl time.Duration) string {
	t.Helper()
	creds, err := MintHostCreds(acc, host, ttl)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "host-"+host+".creds")
	writeCreds(t, path, creds.File, 0o600)
	return path
}

// mintInto mints capsule id's credentials for host and writes them to
// <dir>/<id>.creds, returning them.
func mintInto(t *testing.T, acc nkeys.KeyPair, dir, host, id string, publish, subscribe []string) CapsuleCreds {
	t.Helper()
	return mintFor(t, acc, dir, host, id, publish, subscribe, time.Hour, 0o600)
}

// mintFor is mintInto with credentials valid for ttl, written with mode.
func mintFor(t *testing.T, acc nkeys.KeyPair, dir, host, id string, publish, subscribe []string, ttl time.Duration, mode os.FileMode) CapsuleCreds {
	t.Helper()
	creds, err := MintCapsuleCreds(acc, host, id, publish, subscribe, ttl)
	if err != nil {
		t.Fatal(err)
	}
	writeCreds(t, filepath.Join(dir, id+".creds"), creds.File, mode)
	return creds
}

// newExternalHost is a host on an external cluster in operator mode: its
// own connections use hostFile, each capsule's its file in dir.
func newExternalHost(t *testing.T, ns *server.Server, id, hostFile, dir string, tweak ...func(*Options)) *testHost {
	t.Helper()
	h := &testHost{got: make(chan *ipc.Envelope, 1024)}
	opts := Options{HostID: id, URL: ns.ClientURL(), Connect: []nats.Option{nats.UserCredentials(hostFile)}, CredsDir: dir,
		Deliver: func(e *ipc.Envelope, _ func(string) bool) error {
			h.got <- e
			return nil
		}}
	for _, f := range tweak {
		f(&opts)
	}
	tr, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.Close)
	h.Transport = tr
	return h
}

// TestEachCapsuleConnectsWithItsOwnCredentials: on an external cluster in
// operator mode, with a directory of per-capsule credentials, the broker
// holds each capsule to the grants the operator minted, even when the
// host's kernel would let it publish more (a compromised host, or a
// manifest edited after the mint): the forged publish is refused by the
// server and counted, the granted one crosses to the other host.
func TestEachCapsuleConnectsWithItsOwnCredentials(t *testing.T) {
	ns, acc := natsbustest.OperatorServer(t)
	dirA, dirB := t.TempDir(), t.TempDir()
	mintInto(t, acc, dirA, "hostA", "p", []string{"chat.a"}, nil)
	mintInto(t, acc, dirB, "hostB", "q", nil, []string{"chat.*"})
	a := newExternalHost(t, ns, "hostA", hostCreds(t, acc, dirA, "hostA"), dirA)
	b := newExternalHost(t, ns, "hostB", hostCreds(t, acc, dirB, "hostB"), dirB)
	// The manifest hostA loads claims chat.b too; the operator did not grant it.
	a.attach(t, "p", []string{"chat.a", "chat.b"}, nil)
	b.attach(t, "q", nil, []string{"chat.*"})

	a.forward("p", "chat.b", `"forged"`)
	a.forward("p", "chat.a", `"honest"`)
	e := b.next(t)
	if e.Topic != "chat.a" || e.SourceID != "p" || string(e.Payload) != `"honest"` {
		t.Fatalf("host B received %s from %s: %s, want the honest chat.a from p", e.Topic, e.SourceID, e.Payload)
	}
	testutil.WaitFor(t, guard, "the broker to refuse p's publish outside its minted grant", func() bool {
		return a.Stats().Drops[DropPermission] >= 1
	})
	if got := a.Stats().Drops[DropPermission]; got != 1 {
		t.Fatalf("%d permission drops on host A, want exactly the forged one", got)
	}
	select {
	case e := <-b.got:
		t.Fatalf("host B also received %s %s", e.Topic, e.Payload)
	default:
	}
}

// TestCapsuleCredentialsCannotActAsAnother: a raw client holding one
// capsule's minted credentials (what a thief takes from the directory)
// cannot publish as another capsule or outside its grants: the server
// refuses each, and the other host receives only the honest publish.
func TestCapsuleCredentialsCannotActAsAnother(t *testing.T) {
	ns, acc := natsbustest.OperatorServer(t)
	dirA, dirB := t.TempDir(), t.TempDir()
	stolen := mintInto(t, acc, dirA, "hostA", "p", []string{"chat.a"}, nil)
	mintInto(t, acc, dirA, "hostA", "r", []string{"chat.b"}, nil)
	mintInto(t, acc, dirB, "hostB", "q", nil, []string{"chat.*"})
	a := newExternalHost(t, ns, "hostA", hostCreds(t, acc, dirA, "hostA"), dirA)
	b := newExternalHost(t, ns, "hostB", hostCreds(t, acc, dirB, "hostB"), dirB)
	a.attach(t, "p", []string{"chat.a"}, nil)
	a.attach(t, "r", []string{"chat.b"}, nil)
	b.attach(t, "q", nil, []string{"chat.*"})

	rogue, violations, err := dialCreds(t, ns, stolen)
	if err != nil {
		t.Fatal(err)
	}
	forgeries := []struct{ name, subject string }{
		{"as another capsule of its host", SubjectPrefix + ".r.chat.b"},
		{"as a capsule of another host", SubjectPrefix + ".q.chat.a"},
		{"outside its grants", SubjectPrefix + ".p.chat.b"},
		{"as the kernel", SubjectPrefix + ".kernel.chat.a"},
		{"as a host's presence", PresencePrefix + ".hostA"},
	}
	for _, f := range forgeries {
		must(t, rogue.Publish(f.subject, frame(t, "forged: "+f.name)))
	}
	must(t, rogue.Publish(SubjectPrefix+".p.chat.a", frame(t, "honest")))
	must(t, rogue.Flush())
	e := b.next(t)
	if e.SourceID != "p" || e.Topic != "chat.a" || string(e.Payload) != `"honest"` {
		t.Fatalf("host B received %s from %s: %s; a forgery went through", e.Topic, e.SourceID, e.Payload)
	}
	testutil.WaitFor(t, guard, "the server to refuse every forgery", func() bool { return violations() >= len(forgeries) })
	if got := violations(); got != len(forgeries) {
		t.Fatalf("%d violations, want %d", got, len(forgeries))
	}
	// r's own credentials still publish its grant.
	a.forward("r", "chat.b", `"from r"`)
	if e := b.next(t); e.SourceID != "r" || string(e.Payload) != `"from r"` {
		t.Fatalf("host B received %s from %s: %s, want r's chat.b", e.Topic, e.SourceID, e.Payload)
	}
}

// TestAttachRefusesCapsuleWithoutItsOwnCredentials: with a credentials
// directory, a capsule whose file is missing, readable by others, or not
// a file is refused at attach, naming the file, rather than run under the
// host's wider credentials.
func TestAttachRefusesCapsuleWithoutItsOwnCredentials(t *testing.T) {
	ns, acc := natsbustest.OperatorServer(t)
	dir := t.TempDir()
	loose, err := MintCapsuleCreds(acc, "hostA", "loose", []string{"chat.a"}, nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	writeCreds(t, filepath.Join(dir, "loose.creds"), loose.File, 0o644)
	if err := os.Mkdir(filepath.Join(dir, "dir.creds"), 0o700); err != nil {
		t.Fatal(err)
	}
	a := newExternalHost(t, ns, "hostA", hostCreds(t, acc, dir, "hostA"), dir)
	cases := []struct{ id, wantInErr string }{
		{"missing", "no credentials file " + filepath.Join(dir, "missing.creds")},
		{"loose", "chmod 600"},
		{"dir", "not a regular file"},
	}
	for _, tc := range cases {
		t.Run(tc.id, func(t *testing.T) {
			err := a.Attach(tc.id, []string{"chat.a"}, nil, nil)
			if err == nil || !strings.Contains(err.Error(), tc.wantInErr) {
				t.Fatalf("err %v, want one containing %q", err, tc.wantInErr)
			}
		})
	}
	if n := len(*a.conns.Load()); n != 0 {
		t.Fatalf("%d capsule connections left after refused attaches", n)
	}
}

// frame is a well-formed frame carrying payload as a JSON string, as a
// rogue client holding a host's credentials would publish it.
func frame(t *testing.T, payload string) []byte {
	t.Helper()
	quoted, _ := json.Marshal(payload)
	body, err := appendFrame(nil, "rogue", nil, &ipc.Envelope{Payload: quoted, Principal: "alice", Seq: 1, Timestamp: time.Now().UnixNano()})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// TestHostCredentialsCannotActAsACapsule: the host's own credentials (what
// every connection but the capsules' uses) publish only the host's
// presence: a host that holds them cannot publish as any capsule, its own
// included, nor announce another host.
func TestHostCredentialsCannotActAsACapsule(t *testing.T) {
	ns, acc := natsbustest.OperatorServer(t)
	dirB := t.TempDir()
	mintInto(t, acc, dirB, "hostB", "q", nil, []string{"chat.*"})
	b := newExternalHost(t, ns, "hostB", hostCreds(t, acc, dirB, "hostB"), dirB)
	b.attach(t, "q", nil, []string{"chat.*"})
	stolen, err := MintHostCreds(acc, "hostA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	rogue, violations, err := dialCreds(t, ns, stolen)
	if err != nil {
		t.Fatal(err)
	}
	forgeries := []string{SubjectPrefix + ".p.chat.a", SubjectPrefix + ".kernel.chat.a", PresencePrefix + ".hostB", "chat.a"}
	for _, subject := range forgeries {
		must(t, rogue.Publish(subject, frame(t, "forged")))
	}
	must(t, rogue.Publish(PresencePrefix+".hostA", []byte(`{}`)))
	must(t, rogue.Flush())
	testutil.WaitFor(t, guard, "the server to refuse every forgery", func() bool { return violations() >= len(forgeries) })
	if got := violations(); got != len(forgeries) {
		t.Fatalf("%d violations, want %d (its own presence refused?)", got, len(forgeries))
	}
	// An honest capsule publishes after the forgeries were refused: it is
	// the first thing host B receives.
	honest, _, err := dialCreds(t, ns, mintInto(t, acc, t.TempDir(), "hostA", "p", []string{"chat.a"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	must(t, honest.Publish(SubjectPrefix+".p.chat.a", frame(t, "honest")))
	if e := b.next(t); e.SourceID != "p" || string(e.Payload) != `"honest"` {
		t.Fatalf("host B received %s from %s: %s; a forgery went through", e.Topic, e.SourceID, e.Payload)
	}
}

// TestPrivateCredentialsRefuseAFileOthersMayRead: the credentials option
// reads the file at every connect, and refuses it once others may read
// it, as the host refuses such a file at attach and at renewal
// (nats.UserCredentials would have used it on the next reconnect).
func TestPrivateCredentialsRefuseAFileOthersMayRead(t *testing.T) {
	ns, acc := natsbustest.OperatorServer(t)
	dir := t.TempDir()
	mintInto(t, acc, dir, "hostA", "p", []string{"chat.a"}, nil)
	path := filepath.Join(dir, "p.creds")
	nc, err := nats.Connect(ns.ClientURL(), PrivateCredentials(path))
	if err != nil {
		t.Fatalf("a private credentials file refused: %v", err)
	}
	nc.Close()
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	nc, err = nats.Connect(ns.ClientURL(), PrivateCredentials(path))
	if err == nil {
		nc.Close()
		t.Fatal("connected with a credentials file others may read")
	}
	if !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("error %q does not say how to fix the file", err)
	}
}
