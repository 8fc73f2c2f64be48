package toolclient

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/ipc"
)

// answerQuestions listens on topic (of this principal only: the route is
// scoped) until the returned stop is called, handing each question to
// handle on its own goroutine, one at a time. It subscribes before the call
// is published, so no question can be missed.
func (c *ToolClient) answerQuestions(ctx context.Context, topic string, handle func(context.Context, bus.Delivery)) (stop func(), err error) {
	return c.follow(ctx, topic, false, handle)
}

// follow is answerQuestions; with drain, stop first hands handle what the
// route still holds (a route hands out what it holds before it reports
// the context's end).
func (c *ToolClient) follow(ctx context.Context, topic string, drain bool, handle func(context.Context, bus.Delivery)) (stop func(), err error) {
	sub, err := c.k.Subscribe(c.plainCaller(), topic, true)
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
			handle(ctx, d)
		}
	}()
	return func() {
		cancel()
		if drain {
			wg.Wait()
			for {
				d, err := sub.Recv(ctx)
				if err != nil {
					break
				}
				handle(ctx, d)
			}
		}
		sub.Close()
		wg.Wait()
	}, nil
}

// answerApprovals answers, with c.Approve, the approval questions about
// callID until the returned stop is called.
func (c *ToolClient) answerApprovals(ctx context.Context, callID string) (stop func(), err error) {
	return c.answerQuestions(ctx, ipc.ApprovalRequestTopic, func(ctx context.Context, d bus.Delivery) {
		var q ipc.ApprovalRequired
		if json.Unmarshal(ipc.GuestBytes(d.Envelope.Payload), &q) != nil || q.CallID != callID || q.RequestID == "" {
			return
		}
		p, err := ipc.EncodePayload(ipc.ApprovalResponse{RequestID: q.RequestID, Decision: c.Approve(ctx, q)})
		if err == nil {
			err = c.publishAnswer(ipc.ApprovalResponseTopic(q.RequestID), p)
		}
		if err != nil {
			c.k.Logger().Warn("approval answer not published", "request_id", q.RequestID, "err", err)
		}
	})
}

// publishAnswer publishes an answer on its question's scoped response
// topic; an answer continues work already admitted.
func (c *ToolClient) publishAnswer(topic string, payload json.RawMessage) error {
	caller := c.plainCaller()
	caller.Continues = true
	_, err := c.k.Publish(caller, topic, payload)
	return err
}
