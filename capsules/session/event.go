package session

import (
	"fmt"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/sdk"
)

// Event kinds, each published on session.v1.event.<kind> after the write
// it reports (spec §7.1 v0.2), so a frontend can refresh its list.
const (
	EventCreated = "created"
	EventUpdated = "updated"
	EventDeleted = "deleted"
	eventPrefix  = "session.v1.event."
)

// EventTopic is where events of kind are published.
func EventTopic(kind string) string { return eventPrefix + kind }

// Event reports a change to a session. Summary is the session after the
// change, null for a deleted one.
type Event struct {
	Kind      string   `json:"kind"`
	SessionID string   `json:"session_id"`
	Summary   *Summary `json:"summary"`
}

// announce publishes an event for session id. The change is already
// written, so a failure here is logged and does not fail the request.
func announce(c *sdk.Call, kind, id string) {
	ev := Event{Kind: kind, SessionID: id}
	if kind != EventDeleted {
		r, err := load(c, id)
		if err != nil {
			c.Log(hostapi.LogWarn, fmt.Sprintf("session: %s event for %q not published: %v", kind, id, err))
			return
		}
		s := summarize(id, r)
		ev.Summary = &s
	}
	if err := c.PublishJSON(EventTopic(kind), ev); err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("session: %s event for %q not published: %v", kind, id, err))
	}
}
