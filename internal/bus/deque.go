package bus

// deque is a growable ring buffer. Queues on the hot path reuse its storage,
// so a steady stream of messages allocates nothing.
type deque[T any] struct {
	buf  []T
	head int
	n    int
}

func (d *deque[T]) len() int { return d.n }

func (d *deque[T]) pushBack(v T) {
	if d.n == len(d.buf) {
		d.grow()
	}
	d.buf[(d.head+d.n)&(len(d.buf)-1)] = v
	d.n++
}

func (d *deque[T]) front() T { return d.buf[d.head] }

func (d *deque[T]) popFront() T {
	var zero T
	v := d.buf[d.head]
	d.buf[d.head] = zero // release the pointer for the GC
	d.head = (d.head + 1) & (len(d.buf) - 1)
	d.n--
	if d.n == 0 {
		d.head = 0
	}
	return v
}

// keepCap is the largest storage reset keeps. A receiver's batch empties
// every time its receiver catches up, so storage is kept for the next batch
// instead of being grown again from 8; beyond this it was a one-off, and is
// given back. (Principal queues, which grow with a publisher's backlog, are
// chunked instead: chunkfifo.go.)
const keepCap = 1024

// reset empties the deque, dropping references but keeping storage up to
// keepCap entries.
func (d *deque[T]) reset() {
	switch {
	case len(d.buf) > keepCap:
		d.buf = nil
	case d.n > 0:
		// An empty deque holds no references: popFront zeroes each slot
		// it takes, so only a deque emptied here needs clearing.
		clear(d.buf)
	}
	d.head, d.n = 0, 0
}

func (d *deque[T]) grow() {
	size := 2 * len(d.buf)
	if size == 0 {
		size = 8
	}
	buf := make([]T, size)
	for i := 0; i < d.n; i++ {
		buf[i] = d.buf[(d.head+i)&(len(d.buf)-1)]
	}
	d.buf, d.head = buf, 0
}
