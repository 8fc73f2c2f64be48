package kernel

import (
	"context"
	"testing"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/ipc"
)

// observer reads, as the operator's kernel observer does (bus.Observe),
// every envelope whose topic matches pattern, replies included: a test
// that watches other capsules' traffic cannot do it with a route, since a
// reply reaches only the routes of the capsules that asked (DESIGN §4c).
type observer struct {
	ring    *bus.Ring
	pattern string
}

func observe(t *testing.T, k *Kernel, pattern string) *observer {
	t.Helper()
	o := &observer{ring: k.Bus.Observe(), pattern: pattern}
	t.Cleanup(o.Close)
	return o
}

// Recv returns the next matching envelope, waiting until ctx ends.
func (o *observer) Recv(ctx context.Context) (bus.Delivery, error) {
	for {
		d, err := o.ring.Recv(ctx)
		if err != nil || ipc.MatchRoute(o.pattern, d.Envelope.Topic) {
			return d, err
		}
	}
}

// TryRecv returns the next matching envelope already observed, if any.
func (o *observer) TryRecv() (bus.Delivery, bool) {
	for {
		d, ok := o.ring.TryRecv()
		if !ok || ipc.MatchRoute(o.pattern, d.Envelope.Topic) {
			return d, ok
		}
	}
}

func (o *observer) Close() { o.ring.Close() }
