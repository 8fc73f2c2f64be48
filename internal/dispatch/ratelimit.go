package dispatch

import (
	"sync"
	"time"
)

// Defaults for the publish rate limit (DESIGN §4b).
const (
	DefaultRateBytesPerSec = 10 << 20
	DefaultRateBurst       = 2 << 20
)

// pruneAbove is the bucket count past which full buckets are forgotten; a
// full bucket behaves exactly like a missing one, so pruning changes nothing
// but memory.
const pruneAbove = 1024

// limiter is one capsule's set of token buckets, one per principal, in bytes.
// Each bucket refills at rate bytes per second up to burst; a publish takes
// its size out of the bucket or is refused, consuming nothing.
type limiter struct {
	rate, burst int64

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastPrune int64
	// last is the bucket of the principal charged last (lastPrincipal):
	// one principal usually publishes many times in a row, and this saves
	// the map lookup. It is always a bucket in the map: pruning runs only
	// just before last is replaced, and clears it as well should that
	// ever change.
	last          *bucket
	lastPrincipal string
}

// bucket holds its tokens scaled by one second in nanoseconds (bytes×1e9),
// so that a refill of elapsed nanoseconds adds exactly elapsed×rate and no
// fraction of a byte is lost between closely spaced publishes.
type bucket struct {
	scaled int64
	last   int64
}

const scale = int64(time.Second)

func newLimiter(rate, burst int64) *limiter {
	return &limiter{rate: rate, burst: burst, buckets: make(map[string]*bucket)}
}

// take charges n bytes to principal's bucket at time now and reports whether
// they were available.
func (l *limiter) take(principal string, n int64, now int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucketAt(principal, now)
	if n > b.scaled/scale {
		return false
	}
	b.scaled -= n * scale
	return true
}

// borrow charges n bytes to principal's bucket whether or not they are
// there: the bucket may go into debt, down to one burst below empty, and
// later publishes wait for the refill to repay it. It is for the one answer
// a call owes its caller (FailureOf), which must not be lost to the
// limit but must still be paid for.
func (l *limiter) borrow(principal string, n int64, now int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucketAt(principal, now)
	b.scaled = max(b.scaled-n*scale, -l.burst*scale)
}

// bucketAt returns principal's bucket refilled up to now, making a full one
// for a principal not seen (or pruned) before. The caller holds l.mu.
func (l *limiter) bucketAt(principal string, now int64) *bucket {
	if b := l.last; b != nil && l.lastPrincipal == principal {
		l.refill(b, now)
		return b
	}
	b := l.buckets[principal]
	if b == nil {
		l.prune(now)
		b = &bucket{scaled: l.burst * scale, last: now}
		l.buckets[principal] = b
	} else {
		l.refill(b, now)
	}
	l.last, l.lastPrincipal = b, principal
	return b
}

// refund returns n bytes taken for a publish the bus then refused, so a
// message nobody received costs no quota.
func (l *limiter) refund(principal string, n int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b := l.buckets[principal]; b != nil {
		b.scaled = min(b.scaled+n*scale, l.burst*scale)
	}
}

func (l *limiter) refill(b *bucket, now int64) {
	elapsed := now - b.last
	if elapsed <= 0 {
		// A clock stepped back grants nothing, and the bucket counts
		// from the new reading: anchored to the old one it would refill
		// nothing until the clock caught up again.
		b.last = min(b.last, now)
		return
	}
	b.last = now
	// Compare elapsed with the time this bucket takes to fill before
	// multiplying: the room left (at most two bursts, from one burst in
	// debt, see borrow) fits an int64 since burst is bounded in New, and so
	// does elapsed×rate once it is no more than the room; the sum then never
	// passes full. (Capping elapsed alone let a nearly full bucket at the
	// largest burst overflow after a gap of one to two seconds.)
	full := l.burst * scale
	room := full - b.scaled
	if elapsed > room/l.rate {
		b.scaled = full
		return
	}
	b.scaled += elapsed * l.rate
}

// prune forgets full buckets once the map is large, at most once a second.
func (l *limiter) prune(now int64) {
	if since := now - l.lastPrune; len(l.buckets) < pruneAbove || (since >= 0 && since < int64(time.Second)) {
		return
	}
	l.lastPrune = now
	for p, b := range l.buckets {
		l.refill(b, now)
		if b.scaled == l.burst*scale {
			delete(l.buckets, p)
			if p == l.lastPrincipal {
				l.last = nil
			}
		}
	}
}
