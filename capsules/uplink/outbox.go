package uplink

import (
	"sync"
	"time"

	"github.com/astrid-go/astrid/hostapi"
)

// outbox is one client's outbound side. There is no writer goroutine: the
// goroutine that produces a frame (the request reader's answer, a pump's
// event) writes it on the stream itself when nobody else is writing, so an
// answer costs no hand-off to another goroutine. While someone writes,
// other frames wait on a bounded queue, which the writing goroutine drains
// before it lets go, all queued frames in one host write. A full queue
// means the client is not reading: it is disconnected at once.
//
// A producer whose write stalls (the client's socket buffer is full)
// would stop doing its own job meanwhile: reading requests, or receiving
// its subscription's messages, which would then pile up in the kernel
// instead of filling this queue. So a write held longer than stallWait
// hands the producer's loop to a fresh goroutine (send's takeover), which
// goes on producing into the queue; the queue fills and the client is
// dropped exactly as with a writer goroutine.
type outbox struct {
	n      hostapi.Net
	stream hostapi.NetHandle
	limit  int // frames that may wait

	mu      sync.Mutex
	queue   [][]byte // framed frames waiting for the writing goroutine
	writing bool     // a goroutine is writing: it drains queue before it lets go
	closed  bool     // nothing more is accepted
}

// stallWait is how long a producer may be held by a write before its loop
// is handed to another goroutine. A write into a socket with room returns
// in microseconds; one held this long is waiting for the client to read.
const stallWait = 100 * time.Millisecond

// outcome is what became of one frame given to put.
type outcome int

const (
	written  outcome = iota // written, or queued behind a write in progress
	overflow                // the queue was full: the client must be dropped
	failed                  // a write failed: the stream is broken
	broken                  // the outbox is closed: the client is going away
)

// put writes b (a framed frame) or queues it behind the write in progress.
// When this call becomes the writer and takeover is not nil, a write held
// longer than stallWait starts takeover in a new goroutine, and put answers
// handedOver: the caller must then return without continuing its loop,
// which takeover continues. With a nil takeover the caller simply waits
// (the handshake's answer and a connection's last frame, where nothing
// else depends on it).
//
// slot, called before a takeover is armed, reserves what the takeover
// needs to be waited for (a WaitGroup slot); release gives it back when
// the takeover was not needed.
func (o *outbox) put(b []byte, takeover, slot, release func()) (res outcome, handedOver bool) {
	o.mu.Lock()
	switch {
	case o.closed:
		o.mu.Unlock()
		return broken, false
	case o.writing:
		if len(o.queue) >= o.limit {
			o.closed = true
			o.mu.Unlock()
			return overflow, false
		}
		o.queue = append(o.queue, b)
		o.mu.Unlock()
		return written, false
	}
	o.writing = true
	o.mu.Unlock()

	var stall *time.Timer
	if takeover != nil {
		slot()
		stall = time.AfterFunc(stallWait, takeover)
	}
	res = written
	if !o.drain(b) {
		res = failed
	}
	if stall != nil {
		if stall.Stop() {
			release()
		} else {
			handedOver = true
		}
	}
	return res, handedOver
}

// drain writes b and then whatever was queued meanwhile, until the queue
// is empty, and lets go of the writer's role. A failed write closes the
// outbox (what is queued is dropped) and answers false.
//
// The caller holds the writer's role (o.writing), not o.mu.
func (o *outbox) drain(b []byte) bool {
	for {
		if err := writeFramed(o.n, o.stream, b); err != nil {
			o.mu.Lock()
			o.writing, o.closed, o.queue = false, true, nil
			o.mu.Unlock()
			return false
		}
		o.mu.Lock()
		if len(o.queue) == 0 {
			o.writing = false
			o.mu.Unlock()
			return true
		}
		b = batch(o.queue)
		clear(o.queue)
		o.queue = o.queue[:0]
		o.mu.Unlock()
	}
}

// batch joins framed frames into one buffer, for one host write.
func batch(frames [][]byte) []byte {
	if len(frames) == 1 {
		return frames[0]
	}
	size := 0
	for _, f := range frames {
		size += len(f)
	}
	out := make([]byte, 0, size)
	for _, f := range frames {
		out = append(out, f...)
	}
	return out
}

// close makes every later put answer broken; a write in progress still
// drains what is queued (the frame explaining why the client is dropped,
// say).
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
}
