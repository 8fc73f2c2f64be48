package audit

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/testutil"
)

func newKey(t testing.TB) ed25519.PrivateKey {
	t.Helper()
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func openLog(t testing.TB, dir string, key ed25519.PrivateKey, now func() time.Time) *Log {
	t.Helper()
	l, err := Open(Options{Dir: dir, Key: key, Now: now, SealEvery: time.Hour}) // sealed on Close only
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// recorded is how many entries a chain holds besides its seals.
func recorded(s Summary) uint64 { return s.Entries - s.Seals }

func appendN(t testing.TB, l *Log, principal string, n int) {
	t.Helper()
	for i := range n {
		e := Entry{Principal: principal, Kind: KindToolEnded, Capsule: "fs", Subject: "read_file", Outcome: "ok",
			Detail: map[string]string{"args_sha256": fmt.Sprint(i)}}
		if err := l.Append(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAppendVerifyAndReopen(t *testing.T) {
	dir, key := t.TempDir(), newKey(t)
	l := openLog(t, dir, key, nil)
	appendN(t, l, "default", 3)
	appendN(t, l, "", 2)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// A second Log (another process, or a restart) goes on from the tail.
	l = openLog(t, dir, key, nil)
	appendN(t, l, "default", 2)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	got := map[string]Summary{}
	if err := Verify(dir, key.Public().(ed25519.PublicKey), func(s Summary) { got[s.Chain] = s }); err != nil {
		t.Fatal(err)
	}
	// Each Close sealed each chain it wrote: default is 3, seal, 2, seal.
	if d := got["default"]; d.Entries != 7 || d.Seals != 2 || d.Sealed != 7 || d.Checkpoint != 7 || got[""].Entries != 3 {
		t.Fatalf("summaries %+v", got)
	}
	var seqs []uint64
	if err := Show(dir, Filter{Principals: []string{"default"}, Seals: true}, func(r Record) error {
		seqs = append(seqs, r.Entry.Seq)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seqs) != "[1 2 3 4 5 6 7]" {
		t.Fatalf("show: %v", seqs)
	}
}

func TestConcurrentAppendsShareCommits(t *testing.T) {
	dir, key := t.TempDir(), newKey(t)
	l := openLog(t, dir, key, nil)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() { appendN(t, l, fmt.Sprintf("p%d", g%3), 100) })
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	total := uint64(0)
	if err := Verify(dir, key.Public().(ed25519.PublicKey), func(s Summary) { total += recorded(s) }); err != nil {
		t.Fatal(err)
	}
	if total != 1600 {
		t.Fatalf("%d entries, want 1600", total)
	}
}

// Two Logs on one directory (a daemon and a command) take turns on a
// chain's lock, so the chain never forks. Each keeps the lock from its
// first write to its next seal, so the other waits at most SealEvery.
func TestTwoWritersOneChain(t *testing.T) {
	dir, key := t.TempDir(), newKey(t)
	open := func() *Log {
		l, err := Open(Options{Dir: dir, Key: key, SealEvery: 2 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	a, b := open(), open()
	var wg sync.WaitGroup
	wg.Go(func() { appendN(t, a, "default", 200) })
	wg.Go(func() { appendN(t, b, "default", 200) })
	wg.Wait()
	if err := errors.Join(a.Close(), b.Close()); err != nil {
		t.Fatal(err)
	}
	sum, err := VerifyChain(dir, "default", key.Public().(ed25519.PublicKey))
	if err != nil || recorded(sum) != 400 || sum.Unsealed() != 0 {
		t.Fatalf("%+v %v", sum, err)
	}
}

func TestClockSetBackwards(t *testing.T) {
	dir, key := t.TempDir(), newKey(t)
	var mu sync.Mutex
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	l := openLog(t, dir, key, clock)
	appendN(t, l, "default", 1)
	mu.Lock()
	now = now.Add(-time.Hour)
	mu.Unlock()
	appendN(t, l, "default", 1)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyChain(dir, "default", key.Public().(ed25519.PublicKey)); err != nil {
		t.Fatal(err)
	}
	var times []time.Time
	Show(dir, Filter{Seals: true}, func(r Record) error { times = append(times, r.Entry.Time); return nil })
	if len(times) != 3 || times[1].Before(times[0]) || times[2].Before(times[1]) {
		t.Fatalf("times %v: the second went back", times)
	}
}

func TestAppendRefusesBadEntries(t *testing.T) {
	l := openLog(t, t.TempDir(), newKey(t), nil)
	defer l.Close()
	for _, e := range []Entry{
		{Principal: "../etc", Kind: KindNote},
		{Principal: "a/b", Kind: KindNote},
		{Principal: strings.Repeat("a", 65), Kind: KindNote},
		{Kind: ""},
		{Kind: KindNote, Subject: strings.Repeat("x", MaxFieldBytes+1)},
	} {
		if err := l.Append(context.Background(), e); !errors.Is(err, ErrInvalid) {
			t.Errorf("%.60v: %v, want ErrInvalid", e, err)
		}
	}
}

func TestUnfinishedLastLineIsCutOnOpen(t *testing.T) {
	dir, key := t.TempDir(), newKey(t)
	l := openLog(t, dir, key, nil)
	appendN(t, l, "default", 2)
	l.Close()
	f, _ := os.OpenFile(ChainPath(dir, "default"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"entry":{"seq":4`)
	f.Close()
	l = openLog(t, dir, key, nil)
	appendN(t, l, "default", 1)
	l.Close()
	sum, err := VerifyChain(dir, "default", key.Public().(ed25519.PublicKey))
	if err != nil || recorded(sum) != 3 {
		t.Fatalf("%+v %v", sum, err)
	}
}

func TestInvalidUTF8StillVerifies(t *testing.T) {
	dir, key := t.TempDir(), newKey(t)
	l := openLog(t, dir, key, nil)
	if err := l.Append(context.Background(), Entry{Principal: "default", Kind: KindNote, Subject: "a\xffb", Detail: map[string]string{"k\xfe": "\xc3"}}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if _, err := VerifyChain(dir, "default", key.Public().(ed25519.PublicKey)); err != nil {
		t.Fatal(err)
	}
}

// An appended entry is in the file when Append returns (a kill -9 cannot
// take it back), reported as unsealed until the sealer signs the chain,
// which it does SealEvery later without a Close.
func TestAppendIsWrittenThenSealed(t *testing.T) {
	dir, key := t.TempDir(), newKey(t)
	pub := key.Public().(ed25519.PublicKey)
	l, err := Open(Options{Dir: dir, Key: key, SealEvery: 20 * time.Millisecond, CheckpointEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Enqueue(Entry{Principal: "default", Kind: KindToolStarted, Subject: "read_file"}); err != nil {
		t.Fatal(err)
	}
	appendN(t, l, "default", 1)
	// Read at once: both entries are there, in order (a seal may come
	// between them if the sealer's timer fired in between, under load).
	var kinds []string
	for _, ln := range readLines(t, ChainPath(dir, "default")) {
		if !bytes.Contains(ln, []byte(`"kind":"audit.seal"`)) {
			kinds = append(kinds, string(ln[bytes.Index(ln, []byte(`"kind":`)):][:20]))
		}
	}
	if len(kinds) != 2 || !strings.Contains(kinds[0], "tool.started") || !strings.Contains(kinds[1], "tool.ended") {
		t.Fatalf("chain right after Append: %q", kinds)
	}
	testutil.WaitFor(t, 10*time.Second, "the sealer to sign and checkpoint the chain", func() bool {
		sum, err := VerifyChain(dir, "default", pub)
		return err == nil && recorded(sum) == 2 && sum.Unsealed() == 0 && sum.Checkpoint == sum.Entries
	})
	// Quiet now: nothing more is written.
	appendN(t, l, "default", 1)
	if sum, err := VerifyChain(dir, "default", pub); err != nil || sum.Unsealed() > 1 {
		t.Fatalf("%+v %v", sum, err)
	}
}

// AppendDurable seals and syncs before it returns.
func TestAppendDurableIsSealedAtOnce(t *testing.T) {
	dir, key := t.TempDir(), newKey(t)
	l := openLog(t, dir, key, nil)
	defer l.Close()
	appendN(t, l, "default", 2)
	if err := l.AppendDurable(context.Background(), Entry{Principal: "default", Kind: KindApprovalAnswered, Outcome: "approve"}); err != nil {
		t.Fatal(err)
	}
	sum, err := VerifyChain(dir, "default", key.Public().(ed25519.PublicKey))
	if err != nil || sum.Entries != 4 || sum.Sealed != 4 || sum.Seals != 1 {
		t.Fatalf("%+v %v", sum, err)
	}
	if l.syncs.Load() != 1 {
		t.Fatalf("%d fdatasyncs, want 1", l.syncs.Load())
	}
}

// A chain left with an unsigned tail (its writer killed) is reported as
// such, still verifies, and the next writer's seal covers it.
func TestUnsealedTailIsReportedThenSealedByTheNextWriter(t *testing.T) {
	dir, key := t.TempDir(), newKey(t)
	pub := key.Public().(ed25519.PublicKey)
	l := openLog(t, dir, key, nil)
	appendN(t, l, "default", 3)
	sum, err := VerifyChain(dir, "default", pub)
	if err != nil || sum.Entries != 3 || sum.Sealed != 0 || sum.Unsealed() != 3 {
		t.Fatalf("before any seal: %+v %v", sum, err)
	}
	// The "killed" writer never seals; its lock goes with it, as a
	// process's does. A second writer goes on.
	c := l.chains["default"]
	c.mu.Lock()
	c.unlock()
	c.held = false
	c.mu.Unlock()
	l2 := openLog(t, dir, key, nil)
	appendN(t, l2, "default", 1)
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
	sum, err = VerifyChain(dir, "default", pub)
	if err != nil || sum.Entries != 5 || sum.Unsealed() != 0 || fmt.Sprint(sum.Adopted) != "[[1 3]]" {
		t.Fatalf("after the next writer: %+v %v (want entries 1 to 3 reported as sealed by a later writer)", sum, err)
	}
	l.Close() // finds the tail sealed: adds nothing
	if sum2, err := VerifyChain(dir, "default", pub); err != nil || fmt.Sprint(sum2) != fmt.Sprint(sum) {
		t.Fatalf("after the first writer's close: %+v %v", sum2, err)
	}
}
