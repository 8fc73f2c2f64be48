package sdk

import (
	"encoding/json"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/abi"
)

// Call is one handler invocation: the event that caused it and the host it
// may use. Every effect goes through the embedded hostapi.Host, bound to this
// capsule and the invoking principal. A Call must not outlive its handler.
type Call struct {
	hostapi.Host
	inv hostapi.Invocation
	// rec, in a wasm guest, is the record the host wrote for this call;
	// inv is then unused, and the accessors copy out of the record (which
	// the host overwrites on the next call), so what they return stays
	// valid after the handler as it does natively.
	rec     *abi.Record
	verdict hostapi.Verdict
}

// Topic is the topic of the event being handled.
func (c *Call) Topic() string {
	if c.rec != nil {
		return string(c.rec.Field(abi.FieldTopic))
	}
	return c.inv.Topic
}

// SourceID is the id of the capsule that published the event ("kernel" for
// the kernel's own events), stamped by the kernel.
func (c *Call) SourceID() string {
	if c.rec != nil {
		return string(c.rec.Field(abi.FieldSource))
	}
	return c.inv.SourceID
}

// Payload is the event's payload, as raw JSON bytes (nil when empty). The
// bytes are the handler's own: in a wasm guest they are copied out of the
// record buffer the host reuses.
func (c *Call) Payload() []byte {
	if c.rec != nil {
		if b := c.rec.Field(abi.FieldPayload); len(b) > 0 {
			return append([]byte(nil), b...)
		}
		return nil
	}
	return c.inv.Payload
}

// Decode unmarshals the payload into v.
func (c *Call) Decode(v any) error { return json.Unmarshal(c.Payload(), v) }

// Continue lets the chain go on; a non-nil payload replaces the one the next
// interceptor sees (subscribers are never affected).
func (c *Call) Continue(payload []byte) {
	c.verdict = hostapi.Verdict{Action: hostapi.Continue, Payload: payload}
}

// Final ends the chain here.
func (c *Call) Final(payload []byte) {
	c.verdict = hostapi.Verdict{Action: hostapi.Final, Payload: payload}
}

// Deny ends the chain and records reason.
func (c *Call) Deny(reason string) {
	c.verdict = hostapi.Verdict{Action: hostapi.Deny, Reason: reason}
}

// PublishJSON marshals v and publishes it on topic.
func (c *Call) PublishJSON(topic string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.Publish(topic, b)
}

// Request publishes payload on topic as a request (hostapi.IPC.PublishRequest):
// its answer, or the kernel's ipc.RequestFailed when no handler gives one,
// comes on req.ReplyTo carrying req.CorrelationID.
func (c *Call) Request(topic string, payload []byte, req hostapi.Request) error {
	return c.PublishRequest(topic, payload, req)
}

// Reply answers the request this call serves, on its reply address; an
// error when the call serves none (the event was published, not requested).
func (c *Call) Reply(payload []byte) error {
	replyTo, corr := c.Serving()
	if corr == "" {
		return hostapi.Errorf(hostapi.CodeInvalid, "reply", "the event on %s is no request: there is nothing to reply to", c.Topic())
	}
	return c.PublishReply(replyTo, corr, payload)
}

// ReplyJSON marshals v and answers the request this call serves (Reply).
func (c *Call) ReplyJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.Reply(b)
}
