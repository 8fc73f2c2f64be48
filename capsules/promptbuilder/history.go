package promptbuilder

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// sessionWait bounds the history fetch (spec §4.2 step 5).
const sessionWait = 5 * time.Second

// history fetches session id's messages from the session store. No store
// loaded means no history to fetch (empty, logged); a store that answers
// an error, or does not answer, is an error: assembling a prompt without
// the history the model is owed would answer a different question.
func history(c *sdk.Call, requestID, sessionID string) ([]ipc.Message, error) {
	stores, err := c.Interceptors(sessionGetMessagesTopic)
	if err != nil {
		return nil, fmt.Errorf("who intercepts %s: %w", sessionGetMessagesTopic, err)
	}
	if len(stores) == 0 {
		c.Log(hostapi.LogInfo, fmt.Sprintf("prompt builder: no session store is loaded; session %s has no history here", sessionID))
		return []ipc.Message{}, nil
	}
	corr := "pb-" + requestID
	req, err := json.Marshal(map[string]string{"session_id": sessionID, "correlation_id": corr})
	if err != nil {
		return nil, err
	}
	payload, err := sdk.RoundTrip(c, sessionGetMessagesTopic, ipc.SessionResponseTopic(sessionGetMessagesOp, corr), corr, req, stores, sessionWait, "session store")
	if err != nil {
		return nil, fmt.Errorf("the history of %s: %w", sessionID, err)
	}
	var ans struct {
		Messages []ipc.Message `json:"messages"`
		Error    string        `json:"error"`
	}
	if err := json.Unmarshal(payload, &ans); err != nil {
		return nil, fmt.Errorf("the history of %s does not decode: %w", sessionID, err)
	}
	if ans.Error != "" {
		return nil, fmt.Errorf("the session store: %s", ans.Error)
	}
	if ans.Messages == nil {
		ans.Messages = []ipc.Message{}
	}
	return ans.Messages, nil
}
