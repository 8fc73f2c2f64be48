package bus

import "context"

// Subscription is what a frontend receives on: a *Route in-process, or a
// subscription over the daemon's socket (internal/daemonclient).
type Subscription interface {
	// Recv waits for the next delivery until ctx ends.
	Recv(ctx context.Context) (Delivery, error)
	// Close ends the subscription; it is idempotent.
	Close()
}

var _ Subscription = (*Route)(nil)
