package sdk

import (
	"errors"
	"time"

	"github.com/astrid-go/astrid/hostapi"
)

// waitMin is the shortest wait Wait makes: a Recv asked for no time at all
// would wait its maximum instead.
const waitMin = time.Millisecond

// Wait lets d pass inside host calls, for a handler that must wait (a
// Retry-After, a publish budget) and has no timer of its own (DESIGN §4): a
// receive, bounded by the host, on topic, which the capsule subscribes to
// (declared with Subscribes and granted in [subscribe]) and nobody publishes
// on. The time counts as waiting, not as the capsule's CPU. A wait under a
// millisecond returns at once.
func (c *Call) Wait(topic string, d time.Duration) error {
	if d < waitMin {
		return nil
	}
	sub, err := c.Subscribe(topic)
	if err != nil {
		return err
	}
	defer func() { _ = c.Unsubscribe(sub) }()
	deadline := c.Now().Add(d)
	for {
		left := deadline.Sub(c.Now())
		if left < waitMin {
			return nil
		}
		if _, err := c.Recv(sub, left); err != nil && !errors.Is(err, hostapi.ErrTimeout) {
			return err
		}
	}
}
