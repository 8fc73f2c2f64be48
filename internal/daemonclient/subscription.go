package daemonclient

import (
	"context"
	"sync"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/uplinkwire"
	"github.com/astrid-go/astrid/ipc"
)

// subscription is one subscription over the socket: a bounded queue the
// connection's reader fills without waiting.
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

// Recv implements bus.Subscription.
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
		select {
		case <-s.notify:
		case <-s.c.done:
			// Deliver what is queued first; then the connection's end.
			s.mu.Lock()
			empty := len(s.queue) == 0
			s.mu.Unlock()
			if empty {
				return bus.Delivery{}, s.c.Err()
			}
		case <-ctx.Done():
			return bus.Delivery{}, ctx.Err()
		}
	}
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
