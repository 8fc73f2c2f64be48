package proc

import "sync"

// logRing keeps the newest max bytes of a background process's output
// that nobody read yet: a chatty process never grows the kernel's memory
// past max, nor blocks on a full pipe, and the bytes it loses are counted.
// It grows as output arrives (most processes write little) and is a ring
// of max bytes once full. Safe for the writer (os/exec's copy goroutine)
// and readers at once.
type logRing struct {
	mu      sync.Mutex
	max     int
	buf     []byte // the unread bytes are buf[start:] then buf[:end-wrap]
	start   int    // the oldest unread byte (0 until the ring is full)
	n       int    // unread bytes
	dropped int64  // unread bytes lost since the previous read
	total   int64  // bytes written since the start
}

func newLogRing(max int) *logRing { return &logRing{max: max} }

func (r *logRing) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	written := len(p)
	r.total += int64(written)
	if len(p) >= r.max {
		r.dropped += int64(r.n + len(p) - r.max)
		p = p[len(p)-r.max:]
		r.start, r.n = 0, 0
	}
	if len(r.buf) < r.max {
		if r.n+len(p) <= r.max {
			// Still growing: the unread bytes sit at buf[:n].
			if r.n+len(p) > len(r.buf) {
				grown := make([]byte, min(r.max, max(2*len(r.buf), r.n+len(p), 4096)))
				copy(grown, r.buf[:r.n])
				r.buf = grown
			}
			copy(r.buf[r.n:], p)
			r.n += len(p)
			return written, nil
		}
		grown := make([]byte, r.max)
		copy(grown, r.buf[:r.n])
		r.buf = grown
	}
	if over := r.n + len(p) - r.max; over > 0 {
		r.start = (r.start + over) % r.max
		r.n -= over
		r.dropped += int64(over)
	}
	at := (r.start + r.n) % r.max
	k := copy(r.buf[at:], p)
	copy(r.buf, p[k:])
	r.n += len(p)
	return written, nil
}

// read returns the unread bytes, how many were dropped since the previous
// read, and the total written; it empties the ring.
func (r *logRing) read() (out []byte, dropped, total int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n > 0 {
		out = make([]byte, r.n)
		k := copy(out, r.buf[r.start:min(len(r.buf), r.start+r.n)])
		copy(out[k:], r.buf[:r.n-k])
	}
	dropped, total = r.dropped, r.total
	r.start, r.n, r.dropped = 0, 0, 0
	return out, dropped, total
}
