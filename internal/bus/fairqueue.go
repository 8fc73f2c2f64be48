package bus

import "github.com/astrid-go/astrid/ipc"

// entry is a queued envelope with its budget cost, computed once at publish.
type entry struct {
	env  *ipc.Envelope
	size int
}

// principalQueue is one principal's FIFO inside a route.
type principalQueue struct {
	principal string
	fifo      chunkFIFO
	bytes     int
	deficit   int
	heapIdx   int
	// inRotation is true while the queue sits in the DRR rotation. A queue
	// emptied by eviction stays there (removing it from the middle would cost
	// a scan) and is retired when it reaches the front.
	inRotation bool
}

// fairQueue holds a route's messages: a FIFO per principal, a byte budget
// enforced by evicting the oldest message of the heaviest principal, and a
// deficit-round-robin rotation for receivers. It is not safe for concurrent
// use; the Route's mutex guards it.
type fairQueue struct {
	budget  int
	quantum int
	bytes   int
	msgs    int

	byPrincipal map[string]*principalQueue
	// last is the queue the previous push went to: one principal usually
	// publishes many messages in a row, and this saves the map lookup.
	last     *principalQueue
	rotation deque[*principalQueue]
	// visiting is true while the front of the rotation is in the middle of
	// its DRR visit (its quantum for this visit already credited).
	visiting bool
	// heavy is a max-heap by bytes over every queue in byPrincipal, so that
	// the eviction victim is found in O(1) and kept in O(log principals).
	heavy []*principalQueue
	free  []*principalQueue
	// chunks is the storage the principals' FIFOs share.
	chunks chunkPool
}

func newFairQueue(budget, quantum int) fairQueue {
	return fairQueue{budget: budget, quantum: quantum, byPrincipal: make(map[string]*principalQueue)}
}

// push enqueues e for its principal, first evicting as many messages as it
// takes to fit the budget. It returns the evicted messages' count; the
// caller guarantees size <= budget.
func (f *fairQueue) push(e *ipc.Envelope, size int) (evicted int) {
	for f.bytes+size > f.budget && len(f.heavy) > 0 {
		f.evictOne()
		evicted++
	}
	q := f.last
	if q == nil || q.principal != e.Principal {
		if q = f.byPrincipal[e.Principal]; q == nil {
			q = f.newQueue(e.Principal)
		}
		f.last = q
	}
	q.fifo.pushBack(&f.chunks, entry{env: e, size: size})
	q.bytes += size
	f.bytes += size
	f.msgs++
	f.siftUp(q.heapIdx)
	if !q.inRotation {
		q.inRotation = true
		f.rotation.pushBack(q)
	}
	return evicted
}

// evictOne drops the oldest message of the principal holding the most bytes.
func (f *fairQueue) evictOne() {
	q := f.heavy[0]
	e := q.fifo.popFront(&f.chunks)
	q.bytes -= e.size
	f.bytes -= e.size
	f.msgs--
	if q.fifo.len() == 0 {
		q.deficit = 0
	}
	f.siftDown(0)
}

// pop takes the next message in deficit-round-robin order: the front
// principal is served while its deficit covers its head, then it goes to
// the back of the rotation and the next principal earns a quantum.
func (f *fairQueue) pop() (entry, bool) {
	for f.rotation.len() > 0 {
		q := f.rotation.front()
		if q.fifo.len() == 0 {
			f.rotation.popFront()
			f.visiting = false
			f.retire(q)
			continue
		}
		head := q.fifo.front()
		if !f.visiting {
			f.visiting = true
			q.deficit += f.quantum
			if f.rotation.len() == 1 && q.deficit < head.size {
				// Alone in the rotation: grant the whole shortfall at once
				// rather than cycling visit after visit.
				q.deficit = head.size
			}
		}
		if head.size <= q.deficit {
			q.fifo.popFront(&f.chunks)
			q.deficit -= head.size
			q.bytes -= head.size
			f.bytes -= head.size
			f.msgs--
			if q.fifo.len() == 0 {
				f.rotation.popFront()
				f.visiting = false
				f.retire(q)
			} else {
				f.siftDown(q.heapIdx)
			}
			return head, true
		}
		// Visit over: keep the unused deficit for the next round.
		f.rotation.popFront()
		f.rotation.pushBack(q)
		f.visiting = false
	}
	return entry{}, false
}

// popBatch moves messages into dst in the order pop gives them, until dst
// holds maxMsgs or at least maxBytes have been moved; it returns the bytes
// moved. While one principal is alone in the rotation its FIFO order is the
// DRR order, so its messages move in a tight loop without a DRR visit per
// message: the receiver holds the route's lock, which publishers wait for,
// a fraction as long. The principal's deficit is then spent (it starts
// from nothing when another principal arrives).
func (f *fairQueue) popBatch(dst *deque[entry], maxMsgs, maxBytes int) (bytes int) {
	for dst.len() < maxMsgs && bytes < maxBytes {
		if f.rotation.len() != 1 {
			e, ok := f.pop()
			if !ok {
				break
			}
			dst.pushBack(e)
			bytes += e.size
			continue
		}
		q := f.rotation.front()
		moved, n := 0, 0
		for q.fifo.len() > 0 && dst.len() < maxMsgs && bytes+moved < maxBytes {
			e := q.fifo.popFront(&f.chunks)
			dst.pushBack(e)
			moved += e.size
			n++
		}
		q.bytes -= moved
		f.bytes -= moved
		f.msgs -= n
		bytes += moved
		q.deficit = 0
		f.visiting = false
		if q.fifo.len() == 0 {
			f.rotation.popFront()
			f.retire(q)
		} else {
			f.siftDown(q.heapIdx)
		}
	}
	return bytes
}

// clear empties the queue and returns how many messages it held.
func (f *fairQueue) clear() int {
	n := f.msgs
	for f.rotation.len() > 0 {
		q := f.rotation.popFront()
		q.fifo.reset(&f.chunks)
	}
	clear(f.byPrincipal)
	f.last = nil
	f.heavy, f.free = nil, nil
	f.chunks = chunkPool{}
	f.bytes, f.msgs, f.visiting = 0, 0, false
	return n
}

func (f *fairQueue) principals() int { return len(f.byPrincipal) }

func (f *fairQueue) newQueue(principal string) *principalQueue {
	var q *principalQueue
	if n := len(f.free); n > 0 {
		q = f.free[n-1]
		f.free = f.free[:n-1]
	} else {
		q = &principalQueue{}
	}
	q.principal = principal
	q.heapIdx = len(f.heavy)
	f.heavy = append(f.heavy, q)
	f.byPrincipal[principal] = q
	return q
}

// retire removes an empty queue that has left the rotation, keeping a few
// for reuse so that principals coming and going do not churn the allocator.
func (f *fairQueue) retire(q *principalQueue) {
	delete(f.byPrincipal, q.principal)
	if f.last == q {
		f.last = nil
	}
	f.heapRemove(q.heapIdx)
	q.inRotation = false
	q.deficit = 0
	q.fifo.reset(&f.chunks)
	if len(f.free) < 64 {
		f.free = append(f.free, q)
	}
}

func (f *fairQueue) heavier(i, j int) bool {
	a, b := f.heavy[i], f.heavy[j]
	if a.bytes != b.bytes {
		return a.bytes > b.bytes
	}
	// On equal bytes the longer backlog loses first; a quiet principal
	// holding one message is never preferred over one holding several.
	return a.fifo.len() > b.fifo.len()
}

func (f *fairQueue) swap(i, j int) {
	f.heavy[i], f.heavy[j] = f.heavy[j], f.heavy[i]
	f.heavy[i].heapIdx = i
	f.heavy[j].heapIdx = j
}

func (f *fairQueue) siftUp(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !f.heavier(i, parent) {
			return
		}
		f.swap(i, parent)
		i = parent
	}
}

func (f *fairQueue) siftDown(i int) {
	n := len(f.heavy)
	for {
		largest := i
		if l := 2*i + 1; l < n && f.heavier(l, largest) {
			largest = l
		}
		if r := 2*i + 2; r < n && f.heavier(r, largest) {
			largest = r
		}
		if largest == i {
			return
		}
		f.swap(i, largest)
		i = largest
	}
}

func (f *fairQueue) heapRemove(i int) {
	last := len(f.heavy) - 1
	if i != last {
		f.swap(i, last)
	}
	f.heavy[last] = nil
	f.heavy = f.heavy[:last]
	if i != last {
		f.siftDown(i)
		f.siftUp(i)
	}
}
