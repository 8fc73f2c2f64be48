package undo

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// The session store's convention (capsules/session, which a built-in may
// not import): it announces a deleted session on sessionDeletedTopic, and
// deletes on sessionDeleteTopic.
const (
	sessionDeletedTopic = "session.v1.event.deleted"
	sessionDeleteTopic  = "session.v1.request.delete"
)

// handleSessionDeleted forgets what was kept for a session the session
// store deleted (astrid session delete, astrid gc): its turns' records and
// prior contents go with it. Only the session store's announcement counts
// (the capsule that takes session deletes), so no other capsule can make
// a principal's undo history disappear.
func handleSessionDeleted(c *sdk.Call) error {
	var ev struct {
		SessionID string `json:"session_id"`
	}
	if json.Unmarshal(c.Payload(), &ev) != nil || !ipc.ValidSessionID(ev.SessionID) {
		return nil
	}
	stores, err := c.Interceptors(sessionDeleteTopic)
	if err != nil || !slices.Contains(stores, c.SourceID()) {
		return nil
	}
	for _, prefix := range []string{turnPrefix, blobPrefix} {
		if _, err := c.KVClear(prefix + ev.SessionID + "/"); err != nil {
			c.Log(hostapi.LogWarn, fmt.Sprintf("undo: what was kept for deleted session %s was not all removed: %v", ev.SessionID, err))
		}
	}
	return nil
}
