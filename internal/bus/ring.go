package bus

import (
	"context"
	"sync"

	"github.com/astrid-go/astrid/ipc"
)

// Ring is a kernel observer's view of every published envelope, whatever its
// topic or principal. It holds the newest RingSize envelopes: when full, the
// oldest is overwritten and counted as lag, reported in the next Delivery's
// Lost and in Stats. Capsules never get one; only the kernel calls Observe.
type Ring struct {
	bus *Bus

	mu      sync.Mutex
	buf     deque[*ipc.Envelope]
	size    int
	lost    uint64 // since the last receive
	lagged  uint64 // over the ring's life
	waiting bool
	closed  bool

	doorbell chan struct{}
	done     chan struct{}
}

func (g *Ring) push(e *ipc.Envelope) {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return
	}
	if g.buf.len() == g.size {
		g.buf.popFront()
		g.lost++
		g.lagged++
	}
	g.buf.pushBack(e)
	wake := g.waiting
	g.waiting = false
	g.mu.Unlock()
	if wake {
		select {
		case g.doorbell <- struct{}{}:
		default:
		}
	}
}

// Recv blocks until an envelope is available, ctx is done (ctx.Err()) or the
// ring or bus is closed (ErrClosed).
func (g *Ring) Recv(ctx context.Context) (Delivery, error) {
	for {
		d, ok, err := g.take(true)
		if err != nil {
			return Delivery{}, err
		}
		if ok {
			return d, nil
		}
		select {
		case <-g.doorbell:
		case <-g.done:
			return Delivery{}, ErrClosed
		case <-ctx.Done():
			return Delivery{}, ctx.Err()
		}
	}
}

// TryRecv returns the oldest held envelope, if any; it never blocks.
func (g *Ring) TryRecv() (Delivery, bool) {
	d, ok, _ := g.take(false)
	return d, ok
}

func (g *Ring) take(park bool) (Delivery, bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return Delivery{}, false, ErrClosed
	}
	if g.buf.len() == 0 {
		g.waiting = park
		return Delivery{}, false, nil
	}
	d := Delivery{Envelope: g.buf.popFront(), Lost: g.lost}
	g.lost = 0
	return d, true, nil
}

// Close detaches the ring from the bus; it is idempotent.
func (g *Ring) Close() {
	g.bus.removeRing(g)
}

// shutdown closes the ring; the caller holds Bus.mu. It returns the lag the
// ring counted so the bus keeps it in its totals.
func (g *Ring) shutdown() (lagged uint64, wasOpen bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return 0, false
	}
	g.closed = true
	g.buf.reset()
	close(g.done)
	return g.lagged, true
}
