package host

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// streamPrefix is the topic prefix of the model streams a provider
// publishes (llm.v1.stream.<provider>) for the requester to follow.
const streamPrefix = "llm.v1.stream."

// maxNoticed bounds the request ids a capsule remembers having been told
// about.
const maxNoticed = 256

// noticed is the model requests whose lost stream events a capsule was
// already told of, oldest first: one notice per request is enough to end
// the turn, and the rest would only fill the queue's headroom.
type noticed struct {
	mu  sync.Mutex
	ids []string
}

// first reports whether id was not noticed yet, and remembers it.
func (n *noticed) first(id string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, seen := range n.ids {
		if seen == id {
			return false
		}
	}
	if len(n.ids) == maxNoticed {
		n.ids = n.ids[1:]
	}
	n.ids = append(n.ids, id)
	return true
}

// noticeLostStreamEvent tells the capsule whose full queue dropped one of
// a model stream's events (it follows that stream: the agent) that its
// request's stream is broken, so that the turn ends at once with a clear
// error instead of waiting for the stream's timeout: an error event for
// the same request id, from the kernel, delivered past the full queue to
// the same handler of this capsule only (dispatch.Notify) — another
// capsule that follows the stream and lost nothing is not told.
func (c *Capsule) noticeLostStreamEvent(d dispatch.Dropped) bool {
	var m struct {
		RequestID string `json:"request_id"`
	}
	if json.Unmarshal(ipc.GuestBytes(d.Payload), &m) != nil || m.RequestID == "" || !c.noticed.first(m.RequestID) {
		return false
	}
	provider := strings.TrimPrefix(d.Envelope.Topic, streamPrefix)
	ev := ipc.StreamEvent{Kind: ipc.StreamError, Text: fmt.Sprintf(
		"an event of provider %s's stream was lost before the agent took it: %s; the answer is incomplete. For bursts of one principal's turns, raise [limits] queue_depth",
		provider, d.Reason)}
	payload, err := ipc.LLMStreamEvent{RequestID: m.RequestID, Event: ev}.MarshalJSON()
	if err != nil {
		return false
	}
	e := &ipc.Envelope{Topic: d.Envelope.Topic, Payload: payload, SourceID: ipc.KernelSourceID, Principal: d.Envelope.Principal, Scope: d.Envelope.Scope, Timestamp: time.Now().UnixNano()}
	return c.deps.Dispatcher.Notify(c.id, d.Pattern, d.Handler, e)
}
