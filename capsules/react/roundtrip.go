package react

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// roundTrip sends req on topic as a request answered on replyTopic with
// correlation id corr, and returns the payload of the first answer sent by
// one of from (the capsules that intercept topic: the kernel stamps the
// source, so no other capsule can answer in their name), waiting at most
// wait; the kernel's answer when none of them gives one is an error that
// says why. It subscribes before publishing, so no answer is lost, and
// unsubscribes before it returns. who names the other party in errors.
func roundTrip(c *sdk.Call, topic, replyTopic, corr string, req []byte, from []string, wait time.Duration, who string) ([]byte, error) {
	sub, err := c.Subscribe(replyTopic)
	if err != nil {
		return nil, err
	}
	defer func() { _ = c.Unsubscribe(sub) }()
	if err := c.Request(topic, req, hostapi.Request{ReplyTo: replyTopic, CorrelationID: corr, Timeout: wait}); err != nil {
		return nil, fmt.Errorf("asking the %s: %w", who, err)
	}
	deadline := c.Now().Add(wait)
	for {
		left := deadline.Sub(c.Now())
		if left <= 0 {
			return nil, fmt.Errorf("the %s did not answer within %s", who, wait)
		}
		msg, err := c.Recv(sub, left)
		if errors.Is(err, hostapi.ErrTimeout) {
			return nil, fmt.Errorf("the %s did not answer within %s", who, wait)
		}
		if err != nil {
			return nil, fmt.Errorf("waiting for the %s: %w", who, err)
		}
		if slices.Contains(from, msg.SourceID) {
			return msg.Payload, nil
		}
		if f, ok := ipc.AsRequestFailed(msg.Payload); ok && msg.SourceID == ipc.KernelSourceID && f.CorrelationID == corr {
			return nil, errors.New(ipc.FailureText(f, "the request to the "+who))
		}
	}
}
