package bus

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestFairQueueInvariants drives a fairQueue with random pushes and pops and
// checks after every step that the byte and message counts add up, that the
// heap keeps the heaviest principal on top, and that every eviction took the
// oldest message of a principal holding the most bytes.
func TestFairQueueInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const budget = 20_000
	f := newFairQueue(budget, 1500)
	seqs := map[string]uint64{}
	var seq uint64
	for step := 0; step < 200_000; step++ {
		if rng.IntN(3) > 0 {
			p := fmt.Sprintf("p%d", rng.IntN(12))
			if rng.IntN(10) == 0 {
				p = "" // system events
			}
			size := 200 + rng.IntN(2000)
			// Who should lose: a principal with the most bytes.
			maxBytes := 0
			for _, q := range f.byPrincipal {
				maxBytes = max(maxBytes, q.bytes)
			}
			needsRoom := f.bytes+size > budget
			seq++
			e := envSized(t, "t.x", p, size)
			e.Seq = seq
			before := map[string]int{}
			for name, q := range f.byPrincipal {
				before[name] = q.bytes
			}
			evicted := f.push(e, size)
			if needsRoom != (evicted > 0) {
				t.Fatalf("step %d: needed room %v but evicted %d", step, needsRoom, evicted)
			}
			if evicted == 1 {
				var victim string
				for name, b := range before {
					after := f.byPrincipal[name].bytes
					if name == p {
						after -= size
					}
					if after < b {
						victim = name
					}
				}
				if before[victim] != maxBytes {
					t.Fatalf("step %d: evicted from %q holding %d bytes, the heaviest held %d", step, victim, before[victim], maxBytes)
				}
			}
		} else {
			if e, ok := f.pop(); ok {
				if e.env.Seq <= seqs[e.env.Principal] {
					t.Fatalf("step %d: principal %q seq %d after %d", step, e.env.Principal, e.env.Seq, seqs[e.env.Principal])
				}
				seqs[e.env.Principal] = e.env.Seq
			}
		}
		checkFairQueue(t, step, &f)
	}
}

func checkFairQueue(t *testing.T, step int, f *fairQueue) {
	t.Helper()
	bytes, msgs := 0, 0
	for _, q := range f.byPrincipal {
		qb := 0
		q.fifo.each(func(e entry) {
			qb += e.size
		})
		if qb != q.bytes {
			t.Fatalf("step %d: %q counts %d bytes, holds %d", step, q.principal, q.bytes, qb)
		}
		bytes += qb
		msgs += q.fifo.len()
		if f.heavy[q.heapIdx] != q {
			t.Fatalf("step %d: %q heap index is stale", step, q.principal)
		}
	}
	if bytes != f.bytes || msgs != f.msgs || bytes > f.budget {
		t.Fatalf("step %d: queue counts %d bytes/%d msgs, holds %d/%d (budget %d)", step, f.bytes, f.msgs, bytes, msgs, f.budget)
	}
	if len(f.heavy) != len(f.byPrincipal) || f.rotation.len() != len(f.byPrincipal) {
		t.Fatalf("step %d: %d in heap, %d in rotation, %d principals", step, len(f.heavy), f.rotation.len(), len(f.byPrincipal))
	}
	for i := 1; i < len(f.heavy); i++ {
		if f.heavier(i, (i-1)/2) {
			t.Fatalf("step %d: heap order broken at %d", step, i)
		}
	}
}

// TestFairQueuePopBatch drives popBatch with random pushes, principals
// coming and going (often one alone, the fast path) and random limits: the
// batch respects its limits, reports the bytes it moved, keeps each
// principal's FIFO order, leaves the counts consistent, and empties a queue
// only when asked for at least as much as it holds.
func TestFairQueuePopBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	f := newFairQueue(1<<20, 512)
	seqs := map[string]uint64{}
	var seq uint64
	var dst deque[entry]
	for step := 0; step < 2_000; step++ {
		principals := 1 + rng.IntN(3)
		if rng.IntN(2) == 0 {
			principals = 1
		}
		for range rng.IntN(300) {
			seq++
			size := 200 + rng.IntN(900)
			e := envSized(t, "t.x", fmt.Sprintf("p%d", rng.IntN(principals)), size)
			e.Seq = seq
			f.push(e, size)
		}
		maxMsgs, maxBytes := 1+rng.IntN(300), 1+rng.IntN(200_000)
		held := f.msgs
		dst.reset()
		moved := f.popBatch(&dst, maxMsgs, maxBytes)
		if dst.len() > maxMsgs {
			t.Fatalf("step %d: batch of %d, limit %d", step, dst.len(), maxMsgs)
		}
		sum, last := 0, 0
		for i := 0; i < dst.len(); i++ {
			e := dst.buf[(dst.head+i)&(len(dst.buf)-1)]
			if e.env.Seq <= seqs[e.env.Principal] {
				t.Fatalf("step %d: principal %q seq %d after %d", step, e.env.Principal, e.env.Seq, seqs[e.env.Principal])
			}
			seqs[e.env.Principal] = e.env.Seq
			sum += e.size
			last = e.size
		}
		if sum != moved {
			t.Fatalf("step %d: reported %d bytes, moved %d", step, moved, sum)
		}
		if sum-last >= maxBytes {
			t.Fatalf("step %d: kept moving past the byte limit %d (%d before the last)", step, maxBytes, sum-last)
		}
		if held > 0 && dst.len() == 0 {
			t.Fatalf("step %d: nothing moved from %d held", step, held)
		}
		if dst.len() < maxMsgs && sum < maxBytes && f.msgs != 0 {
			t.Fatalf("step %d: stopped with room left and %d messages held", step, f.msgs)
		}
		if f.msgs != held-dst.len() {
			t.Fatalf("step %d: %d held, %d moved, %d left", step, held, dst.len(), f.msgs)
		}
		checkFairQueue(t, step, &f)
	}
}
