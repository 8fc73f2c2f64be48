package bus

// A principal's FIFO inside a route is a linked list of fixed-size chunks
// drawn from the route's chunk pool, not a ring buffer that doubles. A
// publisher running ahead of its receiver grows the FIFO to thousands of
// entries and the receiver empties it again; a doubling buffer then
// reallocates, copies and zeroes ever larger arrays on every burst (large
// objects that the GC zeroes and the scavenger returns page by page), which
// was a fifth of benchmark (a)'s profile. Chunks never copy an entry, and a
// drained chunk goes back to the pool for the next push.

// chunkEntries is the number of entries per chunk: 32 × 16 bytes, so a
// principal holding one message costs half a KiB, and a chunk is allocated
// at most once per 32 messages.
const chunkEntries = 32

// maxPooledChunks bounds the chunks a route keeps for reuse once its
// queues drain (≈ 130 KiB), so an idle route does not hold the peak of a
// past burst.
const maxPooledChunks = 256

type chunk struct {
	entries [chunkEntries]entry
	next    *chunk
}

// chunkPool is a route's free list of chunks.
type chunkPool struct {
	free []*chunk
}

func (p *chunkPool) get() *chunk {
	if n := len(p.free); n > 0 {
		c := p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
		return c
	}
	return new(chunk)
}

// put takes back a chunk whose entries are all zero (popFront zeroes each
// slot it takes; reset clears the rest), so a pooled chunk pins nothing.
func (p *chunkPool) put(c *chunk) {
	c.next = nil
	if len(p.free) < maxPooledChunks {
		p.free = append(p.free, c)
	}
}

// chunkFIFO is a FIFO of entries: entries head[first:] … tail[:last].
type chunkFIFO struct {
	head, tail *chunk
	first      int // index of the front entry in head
	last       int // index one past the back entry in tail
	n          int
}

func (q *chunkFIFO) len() int { return q.n }

func (q *chunkFIFO) pushBack(p *chunkPool, e entry) {
	if q.tail == nil {
		c := p.get()
		q.head, q.tail, q.first, q.last = c, c, 0, 0
	} else if q.last == chunkEntries {
		c := p.get()
		q.tail.next = c
		q.tail, q.last = c, 0
	}
	q.tail.entries[q.last] = e
	q.last++
	q.n++
}

// front returns the oldest entry; the FIFO must not be empty.
func (q *chunkFIFO) front() entry { return q.head.entries[q.first] }

// popFront removes and returns the oldest entry; the FIFO must not be empty.
func (q *chunkFIFO) popFront(p *chunkPool) entry {
	c := q.head
	e := c.entries[q.first]
	c.entries[q.first] = entry{} // release the envelope for the GC
	q.first++
	q.n--
	switch {
	case q.n == 0:
		p.put(c)
		*q = chunkFIFO{}
	case q.first == chunkEntries:
		q.head, q.first = c.next, 0
		p.put(c)
	}
	return e
}

// reset empties the FIFO, returning its chunks to the pool.
func (q *chunkFIFO) reset(p *chunkPool) {
	for c := q.head; c != nil; {
		next := c.next
		clear(c.entries[:])
		p.put(c)
		c = next
	}
	*q = chunkFIFO{}
}
