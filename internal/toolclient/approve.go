package toolclient

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/astrid-go/astrid/ipc"
)

// answerApprovals listens, until the returned stop is called, for approval
// questions about callID (asked of this principal only: the route is
// scoped) and answers each with c.Approve. It subscribes before the call is
// published, so no question can be missed.
func (c *ToolClient) answerApprovals(ctx context.Context, callID string) (stop func(), err error) {
	sub, err := c.k.Subscribe(c.plainCaller(), ipc.ApprovalRequestTopic, true)
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
			var q ipc.ApprovalRequired
			if json.Unmarshal(ipc.GuestBytes(d.Envelope.Payload), &q) != nil || q.CallID != callID || q.RequestID == "" {
				continue
			}
			decision := c.Approve(ctx, q)
			answer(c, q.RequestID, decision)
		}
	}()
	return func() {
		cancel()
		sub.Close()
		wg.Wait()
	}, nil
}

// answer publishes decision on the question's scoped response topic.
func answer(c *ToolClient, requestID, decision string) {
	p, err := ipc.EncodePayload(ipc.ApprovalResponse{RequestID: requestID, Decision: decision})
	if err == nil {
		caller := c.plainCaller()
		// An answer continues work already admitted.
		caller.Continues = true
		_, err = c.k.Publish(caller, ipc.ApprovalResponseTopic(requestID), p)
	}
	if err != nil {
		c.k.Logger().Warn("approval answer not published", "request_id", requestID, "err", err)
	}
}
