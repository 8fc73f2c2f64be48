package dispatch

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/ipc"
)

func TestLimiterTokenBucket(t *testing.T) {
	type step struct {
		advance   time.Duration
		principal string
		bytes     int64
		want      bool
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"burst then refusal", []step{
			{0, "alice", 1000, true},
			{0, "alice", 1, false},
		}},
		{"a refusal consumes nothing", []step{
			{0, "alice", 600, true},
			{0, "alice", 500, false},
			{0, "alice", 400, true},
			{0, "alice", 1, false},
		}},
		{"refill is proportional to time", []step{
			{0, "alice", 1000, true},
			{100 * time.Millisecond, "alice", 101, false}, // 100 refilled
			{0, "alice", 100, true},
		}},
		{"refill never exceeds the burst", []step{
			{0, "alice", 1000, true},
			{time.Hour, "alice", 1000, true},
			{0, "alice", 1, false},
		}},
		{"no fraction is lost between close publishes", []step{
			{0, "alice", 1000, true},
			// 1000 steps of 100µs each refill 0.1 byte: 100 bytes in all.
			{100 * time.Microsecond, "alice", 0, true},
		}},
		{"principals have independent buckets", []step{
			{0, "alice", 1000, true},
			{0, "bob", 1000, true},
			{0, "", 1000, true}, // system events have their own bucket
			{0, "alice", 1, false},
		}},
		{"larger than the burst never passes", []step{
			{0, "alice", 1001, false},
			{0, "alice", 1000, true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			l := newLimiter(1000, 1000)
			for i, s := range tt.steps {
				clock.advance(s.advance)
				if s.bytes == 0 { // the fraction test: many tiny refills
					for range 999 {
						clock.advance(s.advance)
						l.take(s.principal, 0, clock.nanos())
					}
					if !l.take(s.principal, 100, clock.nanos()) || l.take(s.principal, 1, clock.nanos()) {
						t.Fatalf("step %d: 1000 refills of 0.1 byte did not add exactly 100 bytes", i)
					}
					continue
				}
				if got := l.take(s.principal, s.bytes, clock.nanos()); got != s.want {
					t.Fatalf("step %d: take(%s, %d) = %v, want %v", i, s.principal, s.bytes, got, s.want)
				}
			}
		})
	}
}

func TestLimiterRefundAndPrune(t *testing.T) {
	clock := newFakeClock()
	l := newLimiter(1000, 1000)
	if !l.take("alice", 800, clock.nanos()) {
		t.Fatal("first take refused")
	}
	l.refund("alice", 800)
	if !l.take("alice", 1000, clock.nanos()) {
		t.Fatal("refund did not return the bytes")
	}
	for i := range pruneAbove + 10 {
		l.take(fmt.Sprintf("p%d", i), 1, clock.nanos())
	}
	before := len(l.buckets)
	clock.advance(2 * time.Second) // every bucket refills; alice is full again
	l.take("newcomer", 1, clock.nanos())
	if after := len(l.buckets); after >= before || after > 1 {
		t.Fatalf("prune kept %d of %d buckets, want only the newcomer", after, before)
	}
	if !l.take("alice", 1000, clock.nanos()) {
		t.Fatal("a pruned principal lost its burst")
	}
}

func TestPublishRateLimit(t *testing.T) {
	clock := newFakeClock()
	b := bus.New(bus.Options{Logger: quietLogger(), MaxMessage: 1000})
	defer b.Close()
	d := New(b, Options{Logger: quietLogger(), Now: clock.now, RateBytesPerSec: 2000, RateBurst: 2000})
	defer d.Close()
	register(t, d, CapsuleACL{ID: "pub", Publish: []string{"a.b"}}, continueTarget)
	register(t, d, CapsuleACL{ID: "other", Publish: []string{"a.b"}}, continueTarget)

	// An envelope of exactly n bytes from capsule "pub".
	payload := func(n int, principal string) json.RawMessage {
		e := ipc.Envelope{Topic: "a.b", SourceID: "pub", Principal: principal, Payload: json.RawMessage(`""`)}
		return json.RawMessage(`"` + strings.Repeat("x", n-e.Size()) + `"`)
	}
	alice := Caller{Capsule: "pub", Principal: "alice"}

	// Publishes refused by the ACL are charged nothing (charged after the ACL).
	for range 100 {
		if _, err := d.Publish(alice, "a.c", payload(900, "alice")); !errors.Is(err, ErrDenied) {
			t.Fatalf("want ErrDenied, got %v", err)
		}
	}
	// A message the bus refuses as too large is refunded.
	if _, err := d.Publish(alice, "a.b", payload(1500, "alice")); !errors.Is(err, bus.ErrTooLarge) {
		t.Fatalf("want bus.ErrTooLarge, got %v", err)
	}
	// So the whole burst is still there: two messages of 1000 bytes.
	mustPublish(t, d, alice, "a.b", string(payload(1000, "alice")))
	mustPublish(t, d, alice, "a.b", string(payload(1000, "alice")))
	_, err := d.Publish(alice, "a.b", payload(200, "alice"))
	if !errors.Is(err, ErrRateLimited) {
		t.Fatalf("third publish: want ErrRateLimited, got %v", err)
	}
	// Other principals of the same capsule, and the same principal on another
	// capsule, have their own buckets.
	mustPublish(t, d, Caller{Capsule: "pub", Principal: "bob"}, "a.b", string(payload(1000, "bob")))
	mustPublish(t, d, Caller{Capsule: "other", Principal: "alice"}, "a.b", `{}`)
	// 100 ms later 200 bytes have come back.
	clock.advance(100 * time.Millisecond)
	mustPublish(t, d, alice, "a.b", string(payload(200, "alice")))
	if _, err := d.Publish(alice, "a.b", payload(200, "alice")); !errors.Is(err, ErrRateLimited) {
		t.Fatalf("want ErrRateLimited, got %v", err)
	}
	s := d.Stats()
	if s.RateLimited != 2 || s.PublishDenied != 100 || s.TooLarge != 1 || s.Published != 5 {
		t.Fatalf("stats = %+v, want 2 rate limited, 100 denied, 1 too large, 5 published", s)
	}
	// Larger than the burst: refused as too large without touching the bucket.
	if _, err := d.Publish(Caller{Capsule: "other", Principal: "carol"}, "a.b", payload(2001, "carol")); !errors.Is(err, bus.ErrTooLarge) {
		t.Fatalf("want bus.ErrTooLarge, got %v", err)
	}
}

// TestLimiterBorrowGoesIntoDebt: a borrowed charge always passes, leaves the
// bucket in debt (never deeper than one burst), and later takes wait until
// the refill has repaid it.
func TestLimiterBorrowGoesIntoDebt(t *testing.T) {
	clock := newFakeClock()
	l := newLimiter(1000, 1000)
	if !l.take("alice", 1000, clock.nanos()) {
		t.Fatal("burst refused")
	}
	l.borrow("alice", 400, clock.nanos()) // bucket at -400
	clock.advance(400 * time.Millisecond)
	if l.take("alice", 1, clock.nanos()) {
		t.Fatal("a take passed while the bucket was still repaying its debt")
	}
	clock.advance(100 * time.Millisecond) // +100: the bucket holds 100
	if !l.take("alice", 100, clock.nanos()) || l.take("alice", 1, clock.nanos()) {
		t.Fatal("after repaying the debt the bucket does not hold exactly what the refill added")
	}
	for range 10 {
		l.borrow("alice", 1000, clock.nanos()) // debt is floored at one burst
	}
	clock.advance(time.Second)
	if l.take("alice", 1, clock.nanos()) {
		t.Fatal("a second after the floor the bucket is not back to empty")
	}
	clock.advance(time.Second)
	if !l.take("alice", 1000, clock.nanos()) {
		t.Fatal("two seconds after the floor the bucket is not full")
	}
}

// TestFailureReplyIsNeverRateLimited: a failure reply goes out when the
// publisher's bucket is empty, and is paid for by the next publishes.
func TestFailureReplyIsNeverRateLimited(t *testing.T) {
	clock := newFakeClock()
	d, b := newTestDispatcher(t, Options{RateBytesPerSec: 1000, RateBurst: 1000, Now: clock.now})
	register(t, d, CapsuleACL{ID: "tool", Publish: []string{"reply"}}, continueTarget)
	r, err := b.Subscribe(bus.RouteSpec{Owner: "watcher", Pattern: "reply"})
	if err != nil {
		t.Fatal(err)
	}
	from := Caller{Capsule: "tool", Principal: "alice"}
	payload := json.RawMessage(`"` + strings.Repeat("x", 300) + `"`)
	admitted := 0
	for ; ; admitted++ {
		if _, err := d.Publish(from, "reply", payload); err != nil {
			if !errors.Is(err, ErrRateLimited) {
				t.Fatal(err)
			}
			break
		}
	}
	if _, err := d.Publish(from, "reply", payload, FailureOf("")); err != nil {
		t.Fatalf("failure reply refused: %v", err)
	}
	delivered := 0
	for {
		if _, ok := r.TryRecv(); !ok {
			break
		}
		delivered++
	}
	if admitted == 0 || delivered != admitted+1 {
		t.Fatalf("%d messages delivered, want the burst's %d and the failure reply", delivered, admitted)
	}
	clock.advance(300 * time.Millisecond) // not yet repaid
	if _, err := d.Publish(from, "reply", payload); !errors.Is(err, ErrRateLimited) {
		t.Fatalf("publish right after the borrowed reply: %v, want rate limited", err)
	}
	if _, err := d.Publish(Caller{Capsule: "tool", Principal: "alice"}, "elsewhere", payload, FailureOf("")); !errors.Is(err, ErrDenied) {
		t.Fatalf("failure reply outside the ACL: %v, want denied", err)
	}
}

// TestLimiterLargestBurstDoesNotOverflow: at the largest burst and rate a
// refill of between one and two seconds onto a nearly full bucket once
// overflowed int64 and left the bucket empty, refusing every publish.
func TestLimiterLargestBurstDoesNotOverflow(t *testing.T) {
	for _, gap := range []time.Duration{time.Millisecond, 999 * time.Millisecond, 1100 * time.Millisecond, 1500 * time.Millisecond, 1999 * time.Millisecond, 2 * time.Second, time.Hour} {
		l := newLimiter(maxRateBurst, maxRateBurst)
		t0 := time.Unix(1_700_000_000, 0).UnixNano()
		if !l.take("alice", 1000, t0) {
			t.Fatal("first take refused")
		}
		if !l.take("alice", maxRateBurst, t0+int64(gap)) {
			t.Errorf("after %v: a full burst was refused (bucket at %d)", gap, l.buckets["alice"].scaled)
		}
	}
	// From one burst in debt, too.
	l := newLimiter(maxRateBurst, maxRateBurst)
	t0 := time.Unix(1_700_000_000, 0).UnixNano()
	l.borrow("alice", 2*maxRateBurst, t0)
	if l.take("alice", 1, t0+int64(999*time.Millisecond)) {
		t.Error("a bucket one burst in debt refilled within a second")
	}
	if !l.take("alice", maxRateBurst, t0+int64(3*time.Second)) {
		t.Error("a bucket one burst in debt was not full after two seconds")
	}
}

// TestLimiterLastBucketSurvivesPruning: after a principal's bucket was
// pruned, its next charge and a refund meet the same bucket, the one in the
// map, not one remembered from before.
func TestLimiterLastBucketSurvivesPruning(t *testing.T) {
	clock := newFakeClock()
	l := newLimiter(1000, 1000)
	for i := range pruneAbove + 10 {
		l.take(fmt.Sprintf("p%d", i), 1, clock.nanos())
	}
	l.take("alice", 1, clock.nanos()) // alice's bucket is the remembered one
	clock.advance(2 * time.Second)    // every bucket refills, alice's too
	l.take("newcomer", 1, clock.nanos())
	if _, kept := l.buckets["alice"]; kept {
		t.Fatal("alice's full bucket was not pruned")
	}
	if !l.take("alice", 600, clock.nanos()) {
		t.Fatal("alice refused after pruning")
	}
	if l.buckets["alice"] == nil || l.buckets["alice"].scaled != 400*scale {
		t.Fatalf("alice's charge went to a bucket outside the map")
	}
	l.refund("alice", 600)
	if !l.take("alice", 1000, clock.nanos()) {
		t.Fatal("the refund reached another bucket than the charge")
	}
}

// TestLimiterSurvivesAClockStepBack: stamps come from the wall clock (read
// through the monotonic one, re-based once a second), so a step of the
// system clock shows. Stepped back an hour, a bucket must refill from the
// new reading on, not wait an hour for the clock to reach its old one.
func TestLimiterSurvivesAClockStepBack(t *testing.T) {
	l := newLimiter(1000, 1000)
	t0 := time.Unix(1_700_000_000, 0).UnixNano()
	if !l.take("alice", 1000, t0) {
		t.Fatal("first take refused")
	}
	back := t0 - int64(time.Hour)
	if l.take("alice", 1, back) {
		t.Fatal("a step back granted tokens")
	}
	if !l.take("alice", 500, back+int64(500*time.Millisecond)) {
		t.Fatal("half a second after the step back, half the rate was refused: the bucket still counts from before the step")
	}
	if l.take("alice", 1, back+int64(500*time.Millisecond)) {
		t.Fatal("the step back granted more than the elapsed time")
	}
}
