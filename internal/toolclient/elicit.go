package toolclient

import (
	"context"
	"encoding/json"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/ipc"
)

// Elicitor answers an elicit question; it may block while a person types,
// and should answer cancelled (ipc.ElicitResponse with neither value set)
// when ctx ends first or nobody can answer. The answer's RequestID is
// filled in by the caller.
type Elicitor func(ctx context.Context, q ipc.ElicitRequest) ipc.ElicitResponse

// answerElicits answers, with c.Elicit, the elicit questions the host asks
// about callID until the returned stop is called. Only the kernel asks
// them: a question from a capsule (one granted the topic) is a phishing
// attempt and is not shown. The answer itself is never logged: it may be a
// secret.
func (c *ToolClient) answerElicits(ctx context.Context, callID string) (stop func(), err error) {
	return c.answerQuestions(ctx, ipc.ElicitRequestTopic, func(ctx context.Context, d bus.Delivery) {
		if d.Envelope.SourceID != ipc.KernelSourceID {
			c.k.Logger().Warn("elicit question ignored: only the kernel asks them", "source", d.Envelope.SourceID)
			return
		}
		var q ipc.ElicitRequest
		if json.Unmarshal(ipc.GuestBytes(d.Envelope.Payload), &q) != nil || q.CallID != callID || q.RequestID == "" {
			return
		}
		r := c.Elicit(ctx, q)
		r.RequestID = q.RequestID
		p, err := ipc.EncodePayload(r)
		if err == nil {
			err = c.publishAnswer(ipc.ElicitResponseTopic(r.RequestID), p)
		}
		if err != nil {
			c.k.Logger().Warn("elicit answer not published", "request_id", r.RequestID, "err", err)
		}
	})
}
