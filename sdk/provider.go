package sdk

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
)

// What every LLM provider's generate handler does the same way (spec
// §6.1): decode the llm_request, make sure the requester hears an end
// whatever happens to the call, and publish events on the provider's
// stream topic under the request's id.

// ProviderRequest decodes the llm_request provider's generate handler was
// called with and registers, as the call's failure reply, an Error event
// for it on llm.v1.stream.<provider>, so a call that traps or runs out of
// time still ends the requester's stream. ok is false when the handler has
// nothing more to do: a payload naming no request id is logged and dropped
// (no one could be told), one that names an id but does not decode is
// answered with an Error here; err is the bus refusing that answer.
func ProviderRequest(c *Call, provider string) (req ipc.LLMRequest, ok bool, err error) {
	payload := c.Payload()
	if derr := req.UnmarshalJSON(payload); derr != nil {
		var id struct {
			RequestID string `json:"request_id"`
		}
		if json.Unmarshal(payload, &id) != nil || id.RequestID == "" {
			c.Log(hostapi.LogWarn, fmt.Sprintf("%s: dropped a request that is not an llm_request: %v", provider, derr))
			return req, false, nil
		}
		return req, false, ProviderFail(c, provider, id.RequestID, fmt.Sprintf("%s: not an llm_request: %v", provider, derr))
	}
	if req.RequestID == "" {
		c.Log(hostapi.LogWarn, provider+": dropped an llm_request without request_id")
		return req, false, nil
	}
	end, eerr := EncodeStreamEvent(req.RequestID, ipc.StreamEvent{Kind: ipc.StreamError, Text: provider + ": the provider did not finish"})
	if eerr == nil {
		eerr = c.SetFailureReply(ipc.LLMStreamTopic(provider), end)
	}
	if eerr != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("%s: request %q: failure reply not registered: %v", provider, req.RequestID, eerr))
	}
	return req, true, nil
}

// ProviderFail logs msg and publishes it as request requestID's Error
// event, the last of its stream.
func ProviderFail(c *Call, provider, requestID, msg string) error {
	c.Log(hostapi.LogWarn, msg)
	return ProviderPublish(c, provider, requestID, ipc.StreamEvent{Kind: ipc.StreamError, Text: msg})
}

// ProviderPublish publishes ev for request requestID on
// llm.v1.stream.<provider>.
func ProviderPublish(c *Call, provider, requestID string, ev ipc.StreamEvent) error {
	out, err := EncodeStreamEvent(requestID, ev)
	if err != nil {
		return err
	}
	return c.Publish(ipc.LLMStreamTopic(provider), out)
}

// EncodeStreamEvent is the llm_stream_event payload of ev for requestID.
func EncodeStreamEvent(requestID string, ev ipc.StreamEvent) ([]byte, error) {
	return ipc.LLMStreamEvent{RequestID: requestID, Event: ev}.MarshalJSON()
}

// Backpressure bounds of PublishPatiently: the first wait, doubled each
// time, and the most it waits in all for one event.
const (
	publishBackoff    = 5 * time.Millisecond
	maxPublishBackoff = 10 * time.Second
)

// PublishPatiently publishes payload on topic, and when the principal's
// publish budget refuses it (CodeRateLimited) waits and tries again — 5 ms,
// doubling, up to 10 s in all — instead of dropping the event: a model that
// streams faster than the budget allows is slowed down, not cut off. The
// waits are Wait on waitTopic, which the capsule must be allowed to
// subscribe to and nobody publishes. Any other error, or the budget still
// refusing after the last wait, is returned.
func PublishPatiently(c *Call, topic string, payload []byte, waitTopic string) error {
	err := c.Publish(topic, payload)
	for wait, waited := publishBackoff, time.Duration(0); hostapi.CodeOf(err) == hostapi.CodeRateLimited && waited < maxPublishBackoff; wait *= 2 {
		if werr := c.Wait(waitTopic, wait); werr != nil {
			break
		}
		waited += wait
		err = c.Publish(topic, payload)
	}
	return err
}
