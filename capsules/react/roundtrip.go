package react

import (
	"errors"
	"time"

	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// roundTrip is sdk.RoundTrip for a handler's call.
func roundTrip(c *sdk.Call, topic, replyTopic, corr string, req []byte, from []string, wait time.Duration, who string) ([]byte, error) {
	return sdk.RoundTrip(c, topic, replyTopic, corr, req, from, wait, who)
}

// notTaken reports whether err says a handler's queue was full: it never
// saw the request, so the same request may be sent again.
func notTaken(err error) bool {
	var rf sdk.RequestFailedError
	return errors.As(err, &rf) && rf.Failed.Reason == ipc.FailQueueFull
}
