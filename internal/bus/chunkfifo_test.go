package bus

import (
	"testing"

	"github.com/astrid-go/astrid/ipc"
)

// TestChunkFIFOOrderAcrossChunks pushes and pops in uneven runs so that the
// front and back cross chunk boundaries at every offset, checking FIFO
// order, the length, and that every chunk handed back is zeroed.
func TestChunkFIFOOrderAcrossChunks(t *testing.T) {
	var pool chunkPool
	var q chunkFIFO
	envs := make([]*ipc.Envelope, 10*chunkEntries)
	for i := range envs {
		envs[i] = &ipc.Envelope{Seq: uint64(i)}
	}
	pushed, popped := 0, 0
	for round := 1; pushed < len(envs); round++ {
		for i := 0; i < round*3 && pushed < len(envs); i++ {
			q.pushBack(&pool, entry{env: envs[pushed], size: pushed})
			pushed++
		}
		for i := 0; i < round*2 && q.len() > 0; i++ {
			if got := q.front(); got.env != envs[popped] {
				t.Fatalf("front is seq %d, want %d", got.env.Seq, popped)
			}
			if got := q.popFront(&pool); got.env != envs[popped] || got.size != popped {
				t.Fatalf("popped seq %d size %d, want %d", got.env.Seq, got.size, popped)
			}
			popped++
		}
		if q.len() != pushed-popped {
			t.Fatalf("len %d, want %d", q.len(), pushed-popped)
		}
		seen := popped
		q.each(func(e entry) {
			if e.env != envs[seen] {
				t.Fatalf("each visits seq %d, want %d", e.env.Seq, seen)
			}
			seen++
		})
		if seen != pushed {
			t.Fatalf("each visited up to %d, want %d", seen, pushed)
		}
	}
	for q.len() > 0 {
		if got := q.popFront(&pool); got.env != envs[popped] {
			t.Fatalf("popped seq %d, want %d", got.env.Seq, popped)
		}
		popped++
	}
	if q.head != nil || q.tail != nil {
		t.Fatal("an empty FIFO still holds chunks")
	}
	assertPoolZeroed(t, &pool)
}

// TestChunkFIFOResetReturnsZeroedChunks: reset hands every chunk back with
// no envelope left in it, and the pool keeps at most maxPooledChunks.
func TestChunkFIFOResetReturnsZeroedChunks(t *testing.T) {
	var pool chunkPool
	var q chunkFIFO
	e := &ipc.Envelope{}
	for range (maxPooledChunks + 10) * chunkEntries {
		q.pushBack(&pool, entry{env: e, size: 1})
	}
	q.popFront(&pool) // the front chunk is now partly consumed
	q.reset(&pool)
	if q.len() != 0 || q.head != nil {
		t.Fatal("reset left entries")
	}
	if len(pool.free) != maxPooledChunks {
		t.Fatalf("pool holds %d chunks, want the bound %d", len(pool.free), maxPooledChunks)
	}
	assertPoolZeroed(t, &pool)
	// Reused chunks serve a new FIFO correctly.
	q.pushBack(&pool, entry{env: e, size: 7})
	if got := q.popFront(&pool); got.env != e || got.size != 7 {
		t.Fatalf("reused chunk returned %+v", got)
	}
}

func assertPoolZeroed(t *testing.T, pool *chunkPool) {
	t.Helper()
	for i, c := range pool.free {
		if c.next != nil {
			t.Fatalf("pooled chunk %d still links another", i)
		}
		for j, e := range c.entries {
			if e != (entry{}) {
				t.Fatalf("pooled chunk %d slot %d still holds %+v", i, j, e)
			}
		}
	}
}

// each calls fn for every entry, oldest first (the tests' view of the
// queue; the bus itself only pops).
func (q *chunkFIFO) each(fn func(entry)) {
	i := q.first
	for c, left := q.head, q.n; left > 0; c, i = c.next, 0 {
		for ; i < chunkEntries && left > 0; i++ {
			fn(c.entries[i])
			left--
		}
	}
}
