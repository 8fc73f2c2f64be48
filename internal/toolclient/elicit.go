package toolclient

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/astrid-go/astrid/ipc"
)

// Elicitor answers an elicit question; it may block while a person types,
// and should answer cancelled (ipc.ElicitResponse with neither value set)
// when ctx ends first or nobody can answer. The answer's RequestID is
// filled in by the caller.
type Elicitor func(ctx context.Context, q ipc.ElicitRequest) ipc.ElicitResponse

// answerElicits listens, until the returned stop is called, for elicit
// questions the host asks about callID (of this principal only: the route
// is scoped) and answers each with c.Elicit. Only the kernel asks them: a
// question from a capsule (one granted the topic) is a phishing attempt
// and is not shown. It subscribes before the call is published, so no
// question can be missed.
func (c *ToolClient) answerElicits(ctx context.Context, callID string) (stop func(), err error) {
	sub, err := c.k.Subscribe(c.plainCaller(), ipc.ElicitRequestTopic, true)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			d, err := sub.Recv(ctx)
			if err != nil {
				return
			}
			if d.Envelope.SourceID != ipc.KernelSourceID {
				c.k.Logger().Warn("elicit question ignored: only the kernel asks them", "source", d.Envelope.SourceID)
				continue
			}
			var q ipc.ElicitRequest
			if json.Unmarshal(ipc.GuestBytes(d.Envelope.Payload), &q) != nil || q.CallID != callID || q.RequestID == "" {
				continue
			}
			r := c.Elicit(ctx, q)
			r.RequestID = q.RequestID
			answerElicit(c, r)
		}
	}()
	return func() {
		cancel()
		sub.Close()
		wg.Wait()
	}, nil
}

// answerElicit publishes r on its question's scoped response topic. The
// answer itself is never logged: it may be a secret.
func answerElicit(c *ToolClient, r ipc.ElicitResponse) {
	p, err := ipc.EncodePayload(r)
	if err == nil {
		caller := c.plainCaller()
		// An answer continues work already admitted.
		caller.Continues = true
		_, err = c.k.Publish(caller, ipc.ElicitResponseTopic(r.RequestID), p)
	}
	if err != nil {
		c.k.Logger().Warn("elicit answer not published", "request_id", r.RequestID, "err", err)
	}
}
