package natsbus

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/astrid-go/astrid/internal/bus/natsbus/natsbustest"
	"github.com/astrid-go/astrid/internal/testutil"
)

// renewing makes a host check its credentials files every 50 ms and
// records the calls it answers as lost.
func renewing(lost *[]LostRequest, mu *sync.Mutex) func(*Options) {
	return func(o *Options) {
		o.PresenceInterval = 50 * time.Millisecond
		o.HostCredsFile = ""
		o.RequestLost = func(r LostRequest) {
			mu.Lock()
			defer mu.Unlock()
			*lost = append(*lost, r)
		}
	}
}

// TestCapsuleCredentialsRenewedWithoutAReload: the operator writes fresh
// credentials over a capsule's expiring file; the host takes them up
// (its connection reconnects with them) and the capsule keeps publishing
// past the old credentials' expiry. A capsule whose file was not renewed
// — or was replaced by one others may read — is dropped by the broker at
// expiry, and that is counted.
func TestCapsuleCredentialsRenewedWithoutAReload(t *testing.T) {
	ns, acc := natsbustest.OperatorServer(t)
	dirA, dirB := t.TempDir(), t.TempDir()
	const ttl = 3 * time.Second
	minted := time.Now()
	mintFor(t, acc, dirA, "hostA", "p", []string{"chat.a"}, nil, ttl, 0o600)
	mintFor(t, acc, dirA, "hostA", "r", []string{"chat.b"}, nil, ttl, 0o600)
	mintInto(t, acc, dirB, "hostB", "q", nil, []string{"chat.*"})
	var mu sync.Mutex
	var lost []LostRequest
	a := newExternalHost(t, ns, "hostA", hostCreds(t, acc, dirA, "hostA"), dirA, renewing(&lost, &mu))
	b := newExternalHost(t, ns, "hostB", hostCreds(t, acc, dirB, "hostB"), dirB)
	a.attach(t, "p", []string{"chat.a"}, nil)
	a.attach(t, "r", []string{"chat.b"}, nil)
	b.attach(t, "q", nil, []string{"chat.*"})

	mintFor(t, acc, dirA, "hostA", "r", []string{"chat.b"}, nil, time.Hour, 0o644) // unusable: others may read it
	mintFor(t, acc, dirA, "hostA", "p", []string{"chat.a"}, nil, time.Hour, 0o600)
	testutil.WaitFor(t, guard, "host A to take up p's fresh credentials", func() bool { return a.Stats().CredsRenewed >= 1 })

	expiry := minted.Add(ttl).Truncate(time.Second).Add(time.Second)
	testutil.WaitFor(t, guard, "the first credentials to have expired, and the broker to drop r", func() bool {
		return time.Now().After(expiry.Add(time.Second)) && a.Stats().CredsExpired >= 1
	})
	if s := a.Stats(); s.CredsRenewed != 1 || s.CredsExpired != 1 {
		t.Fatalf("renewed %d, expired %d: want p renewed (r's world-readable file refused) and only r dropped", s.CredsRenewed, s.CredsExpired)
	}
	a.forward("p", "chat.a", `"after the old expiry"`)
	if e := b.next(t); e.SourceID != "p" || string(e.Payload) != `"after the old expiry"` {
		t.Fatalf("host B received %s from %s: %s", e.Topic, e.SourceID, e.Payload)
	}
}

// TestHostCredentialsRenewedWithoutLoss: the host's own credentials (its
// receiver and presence connections) renewed while another host streams
// to it: every envelope arrives, in order, no call is answered as lost (the
// presence connection's replacement is not the host losing the bus), and
// the host keeps receiving past the old credentials' expiry.
func TestHostCredentialsRenewedWithoutLoss(t *testing.T) {
	ns, acc := natsbustest.OperatorServer(t)
	dirA, dirB := t.TempDir(), t.TempDir()
	const ttl = 3 * time.Second
	minted := time.Now()
	hostFile := hostCredsFor(t, acc, dirA, "hostA", ttl)
	mintInto(t, acc, dirA, "hostA", "q", nil, []string{"chat.*"})
	mintInto(t, acc, dirB, "hostB", "p", []string{"chat.a"}, nil)
	var mu sync.Mutex
	var lost []LostRequest
	a := newExternalHost(t, ns, "hostA", hostFile, dirA, renewing(&lost, &mu), func(o *Options) { o.HostCredsFile = hostFile })
	b := newExternalHost(t, ns, "hostB", hostCreds(t, acc, dirB, "hostB"), dirB)
	a.attach(t, "q", nil, []string{"chat.*"})
	b.attach(t, "p", []string{"chat.a"}, nil)
	testutil.WaitFor(t, guard, "host A's subscription to reach host B's server", func() bool {
		b.forward("p", "chat.a", `"warm-up"`)
		return len(a.got) > 0
	})

	stop := make(chan struct{})
	sent := make(chan int)
	var sending atomic.Int64
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				sent <- n
				return
			default:
			}
			b.forward("p", "chat.a", fmt.Sprint(n))
			n++
			sending.Store(int64(n))
			// A steady stream, not a flood: the pace is not asserted.
			time.Sleep(time.Millisecond)
		}
	}()
	writeCreds(t, hostFile, mustMintHost(t, acc, "hostA"), 0o600)
	testutil.WaitFor(t, guard, "host A to take up its fresh credentials", func() bool { return a.Stats().CredsRenewed >= 1 })
	renewedAt := sending.Load()
	testutil.WaitFor(t, guard, "some envelopes sent after the renewal", func() bool { return sending.Load() >= renewedAt+50 })
	close(stop)
	n := <-sent
	must(t, b.Flush())
	// Every envelope arrives, in the order it was published, across the
	// moment both receivers are in the queue groups (handover.go).
	for i := 0; i < n; {
		// A warm-up envelope still in flight is not one of the stream's.
		p := string(a.next(t).Payload)
		if p == `"warm-up"` {
			continue
		}
		if p != fmt.Sprint(i) {
			t.Fatalf("envelope %s arrived where %d of %d was due: lost or out of order across the renewal", p, i, n)
		}
		i++
	}

	expiry := minted.Add(ttl).Truncate(time.Second).Add(time.Second)
	testutil.WaitFor(t, guard, "the first credentials to have expired", func() bool { return time.Now().After(expiry.Add(time.Second)) })
	b.forward("p", "chat.a", `"after the old expiry"`)
	if e := a.next(t); string(e.Payload) != `"after the old expiry"` {
		t.Fatalf("host A received %s", e.Payload)
	}
	if s := a.Stats(); s.CredsExpired != 0 {
		t.Fatalf("%d connections dropped for expired credentials", s.CredsExpired)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lost) != 0 {
		t.Fatalf("the renewal answered calls as lost: %+v", lost)
	}
}

func mustMintHost(t *testing.T, acc nkeys.KeyPair, host string) []byte {
	t.Helper()
	creds, err := MintHostCreds(acc, host, time.Hour)
	must(t, err)
	return creds.File
}

// TestAttachRefusesExpiredCredentials: a capsule whose credentials file
// has expired is refused at attach, saying so and how to mint fresh ones.
func TestAttachRefusesExpiredCredentials(t *testing.T) {
	ns, acc := natsbustest.OperatorServer(t)
	dir := t.TempDir()
	mintFor(t, acc, dir, "hostA", "p", []string{"chat.a"}, nil, time.Second, 0o600)
	a := newExternalHost(t, ns, "hostA", hostCreds(t, acc, dir, "hostA"), dir)
	cf, err := readCredsFile(filepath.Join(dir, "p.creds"))
	must(t, err)
	testutil.WaitFor(t, guard, "the credentials to expire", func() bool { return cf.expiredAt(time.Now()) })
	err = a.Attach("p", []string{"chat.a"}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "expired") || !strings.Contains(err.Error(), "astrid nats creds") ||
		!strings.Contains(err.Error(), filepath.Join(dir, "p.creds")) {
		t.Fatalf("attach with expired credentials: %v", err)
	}
}
