package daemonclient

import (
	"context"
	"sync"
	"time"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/uplinkwire"
	"github.com/astrid-go/astrid/ipc"
)

// subscription is one subscription over the socket: a bounded queue that
// whoever reads the socket fills without waiting.
type subscription struct {
	c  *Client
	id uint64

	mu     sync.Mutex
	queue  []bus.Delivery
	lost   uint64 // dropped since the last delivery
	closed bool
	notify chan struct{} // buffered 1: something changed
}

var _ bus.Subscription = (*subscription)(nil)

func newSubscription(c *Client, id uint64) *subscription {
	return &subscription{c: c, id: id, notify: make(chan struct{}, 1)}
}

// push queues one event, dropping the oldest when the queue is full.
func (s *subscription) push(f uplinkwire.Frame) {
	d := bus.Delivery{Envelope: &ipc.Envelope{Topic: f.Topic, Payload: f.Payload, SourceID: f.Source, Principal: f.Principal}, Lost: f.Lost}
	if f.Host != "" {
		d.Envelope.SetHost(f.Host)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	if len(s.queue) >= s.c.subBuf {
		s.lost += 1 + s.queue[0].Lost
		s.queue = s.queue[1:]
	}
	s.queue = append(s.queue, d)
	s.mu.Unlock()
	s.wake()
}

func (s *subscription) wake() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// Recv implements bus.Subscription. While nothing is queued it reads the
// socket itself when no one else does (see waitFor).
func (s *subscription) Recv(ctx context.Context) (bus.Delivery, error) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			d := s.queue[0]
			s.queue[0] = bus.Delivery{}
			s.queue = s.queue[1:]
			d.Lost += s.lost
			s.lost = 0
			s.mu.Unlock()
			return d, nil
		}
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return bus.Delivery{}, bus.ErrClosed
		}
		// Deliver what is queued first; then the connection's end.
		if err := s.c.waitFor(ctx, time.Time{}, s.ready, s.notify); err != nil {
			return bus.Delivery{}, err
		}
	}
}

// ready reports whether Recv has something to return.
func (s *subscription) ready() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue) > 0 || s.closed
}

// Close implements bus.Subscription.
func (s *subscription) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.queue = nil
	s.mu.Unlock()
	s.wake()
	s.c.unsubscribe(s.id)
}
