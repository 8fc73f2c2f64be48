package react

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// sessionWait bounds one round trip to the session store (upstream: 2 s;
// more here, since a loaded machine must not turn a slow store into a
// failed turn — the store answers in well under a millisecond).
const sessionWait = hostapi.MaxRecvTimeout / 6

// sessionRequest is the session store's get_messages request
// (capsules/session).
type sessionRequest struct {
	SessionID        string        `json:"session_id"`
	CorrelationID    string        `json:"correlation_id"`
	AppendBeforeRead bool          `json:"append_before_read,omitempty"`
	Messages         []ipc.Message `json:"messages,omitempty"`
	// Usage and CostUSD are the tokens (and price) of the model requests
	// behind Messages, for the session's totals (astrid session show).
	Usage   *ipc.Usage `json:"usage,omitempty"`
	CostUSD *float64   `json:"cost_usd,omitempty"`
	// Compaction, when set, is recorded before the read: a summary of the
	// session's first Upto messages.
	Compaction *storedCompaction `json:"compaction,omitempty"`
}

// sessionReply is its answer: the history, or an error.
type sessionReply struct {
	Messages   []json.RawMessage `json:"messages"`
	Compaction *storedCompaction `json:"compaction"`
	Error      string            `json:"error"`
}

// appendAndRead appends msgs to session's history and returns the whole
// history, in one round trip (the store does both atomically). usage and
// cost, when set, are added to the session's totals with msgs.
func appendAndRead(c *sdk.Call, session string, msgs []ipc.Message, usage *ipc.Usage, cost *float64) ([]ipc.Message, *storedCompaction, error) {
	return sessionRoundTrip(c, sessionRequest{SessionID: session, AppendBeforeRead: len(msgs) > 0, Messages: msgs, Usage: usage, CostUSD: cost})
}

// readHistory reads session's history and compaction, recording comp
// first when it is set.
func readHistory(c *sdk.Call, session string, comp *storedCompaction) ([]ipc.Message, *storedCompaction, error) {
	return sessionRoundTrip(c, sessionRequest{SessionID: session, Compaction: comp})
}

// sessionRoundTrip sends req (its correlation id set here) to the
// session store and returns the history and its compaction.
func sessionRoundTrip(c *sdk.Call, req sessionRequest) ([]ipc.Message, *storedCompaction, error) {
	stores, err := c.Interceptors(sessionGetMessagesTopic)
	if err != nil {
		return nil, nil, err
	}
	if len(stores) == 0 {
		return nil, nil, errors.New("no session store is loaded (nothing handles " + sessionGetMessagesTopic + ")")
	}
	corr := newID(c, "react")
	req.CorrelationID = corr
	body, err := json.Marshal(req)
	if err != nil {
		return nil, nil, err
	}
	payload, err := roundTrip(c, sessionGetMessagesTopic, sessionReplyPrefix+corr, corr, body, stores, sessionWait, "session store")
	if err != nil {
		return nil, nil, err
	}
	var reply sessionReply
	if err := json.Unmarshal(payload, &reply); err != nil {
		return nil, nil, fmt.Errorf("the session store's answer does not decode: %w", err)
	}
	if reply.Error != "" {
		return nil, nil, fmt.Errorf("session store: %s", reply.Error)
	}
	return parseMessages(c, reply.Messages, "session store"), reply.Compaction, nil
}

// appendTurn appends msgs of t to its session's history, with the usage
// of t's model requests not yet recorded there, and returns the history.
func appendTurn(c *sdk.Call, t *turn, msgs []ipc.Message) ([]ipc.Message, *storedCompaction, error) {
	var usage *ipc.Usage
	var cost *float64
	if t.Usage != nil && *t.Usage != t.StoredUsage {
		u := ipc.Usage{
			InputTokens:  t.Usage.InputTokens - min(t.StoredUsage.InputTokens, t.Usage.InputTokens),
			OutputTokens: t.Usage.OutputTokens - min(t.StoredUsage.OutputTokens, t.Usage.OutputTokens),
			CachedTokens: t.Usage.CachedTokens - min(t.StoredUsage.CachedTokens, t.Usage.CachedTokens),
		}
		usage, cost = &u, turnCost(c, t.Provider, t.Model, u)
	}
	history, comp, err := appendAndRead(c, t.SessionID, msgs, usage, cost)
	if err == nil && t.Usage != nil {
		t.StoredUsage = *t.Usage
	}
	return history, comp, err
}

// parseMessages decodes each message, leaving out (and logging) those that
// do not decode.
func parseMessages(c *sdk.Call, raw []json.RawMessage, from string) []ipc.Message {
	out := make([]ipc.Message, 0, len(raw))
	for i, r := range raw {
		var m ipc.Message
		if err := json.Unmarshal(r, &m); err != nil {
			c.Log(hostapi.LogWarn, fmt.Sprintf("react: message %d from the %s left out: %v", i, from, err))
			continue
		}
		out = append(out, m)
	}
	return out
}

// withPrefix returns msgs with prefix and a newline put before the text of
// the last user message, in a copy (the session's history never holds it).
func withPrefix(msgs []ipc.Message, prefix string) []ipc.Message {
	if prefix == "" {
		return msgs
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != ipc.RoleUser {
			continue
		}
		out := slices.Clone(msgs)
		switch m.Content.Kind {
		case ipc.ContentText:
			out[i] = ipc.TextMessage(ipc.RoleUser, prefix+"\n"+m.Content.Text)
		case ipc.ContentMultiPart:
			parts := append([]ipc.ContentPart{{Type: ipc.PartText, Text: prefix}}, m.Content.Parts...)
			out[i] = ipc.Message{Role: ipc.RoleUser, Content: ipc.MessageContent{Kind: ipc.ContentMultiPart, Parts: parts}}
		default:
			continue
		}
		return out
	}
	return msgs
}
