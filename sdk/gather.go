package sdk

import (
	"errors"
	"time"

	"github.com/astrid-go/astrid/hostapi"
)

// Gather collects the answers of a fan-out: it receives on sub until every
// capsule in from has been settled, or window has passed. take sees each
// message with whether its sender (the source_id the kernel stamped, which
// no publisher chooses) is still awaited, and returns true when the
// message settles that sender; a message from a sender not awaited cannot
// settle anything. Gather returns the senders still awaited, in the order
// of from. Subscribe before publishing the request, so no answer is lost.
func Gather(c *Call, sub hostapi.SubscriptionID, from []string, window time.Duration, take func(msg hostapi.Message, awaited bool) bool) ([]string, error) {
	waiting := make(map[string]bool, len(from))
	for _, id := range from {
		waiting[id] = true
	}
	deadline := c.Now().Add(window)
	for len(waiting) > 0 {
		left := deadline.Sub(c.Now())
		if left <= 0 {
			break
		}
		msg, err := c.Recv(sub, left)
		if errors.Is(err, hostapi.ErrTimeout) {
			break
		}
		if err != nil {
			return nil, err
		}
		awaited := waiting[msg.SourceID]
		if take(msg, awaited) && awaited {
			delete(waiting, msg.SourceID)
		}
	}
	var missing []string
	for _, id := range from {
		if waiting[id] {
			missing = append(missing, id)
			delete(waiting, id) // a duplicate in from is reported once
		}
	}
	return missing, nil
}
