package session

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// Manifest is the session store's Capsule.toml.
//
//go:embed Capsule.toml
var Manifest []byte

// Topics of the protocol (spec/capsules-cli.md §7.1, Appendix A).
const (
	AppendTopic      = "session.v1.append"
	GetMessagesTopic = "session.v1.request.get_messages"
	ClearTopic       = "session.v1.request.clear"
	responsePrefix   = "session.v1.response."
)

// Op names of the scoped replies.
const (
	OpGetMessages = "get_messages"
	OpClear       = "clear"
)

// ReplyTopic is where the answer to op for correlationID goes.
func ReplyTopic(op, correlationID string) string {
	return responsePrefix + op + "." + correlationID
}

// New returns the session store's code.
func New() *sdk.Capsule {
	c := sdk.New("Stores clean conversation history per session")
	c.Handle(AppendTopic, "handle_append", handleAppend)
	c.Handle(GetMessagesTopic, "handle_get_messages", handleGetMessages)
	c.Handle(ClearTopic, "handle_clear", handleClear)
	c.Handle(ListTopic, "handle_list", handleList)
	c.Handle(GetMetaTopic, "handle_get_meta", handleGetMeta)
	c.Handle(DeleteTopic, "handle_delete", handleDelete)
	c.Handle(SearchTopic, "handle_search", handleSearch)
	c.Handle(UpdateTopic, "handle_update", handleUpdate)
	registerTools(c)
	c.Publishes(responsePrefix + "*")
	c.Publishes(eventPrefix + "*")
	return c
}

// request is every request's payload; each op reads its own fields.
type request struct {
	SessionID        string        `json:"session_id"`
	CorrelationID    string        `json:"correlation_id"`
	Messages         []ipc.Message `json:"messages"`
	AppendBeforeRead bool          `json:"append_before_read"`
	// Usage is what the model requests that produced Messages cost, in
	// tokens, and CostUSD in dollars when the agent knew the price: added
	// to the session's totals with the messages.
	Usage   *ipc.Usage `json:"usage,omitempty"`
	CostUSD *float64   `json:"cost_usd,omitempty"`
	// Compaction (get_messages) is recorded after the append and before
	// the read: the agent's summary of the session's older messages.
	Compaction *Compaction `json:"compaction,omitempty"`
}

// ErrorReply is the answer to a request that failed.
type ErrorReply struct {
	CorrelationID string `json:"correlation_id"`
	Error         string `json:"error"`
}

// MessagesReply answers get_messages.
type MessagesReply struct {
	CorrelationID string        `json:"correlation_id"`
	Messages      []ipc.Message `json:"messages"`
	// Compaction is the session's summary of its first Compaction.Upto
	// messages, when it has one.
	Compaction *Compaction `json:"compaction,omitempty"`
}

// ClearReply answers clear.
type ClearReply struct {
	CorrelationID string `json:"correlation_id"`
	NewSessionID  string `json:"new_session_id"`
	OldSessionID  string `json:"old_session_id"`
}

// decode reads the payload, tolerating the {"data": {...}} wrapping older
// SDKs delivered (spec §1, compatibility lesson).
func decode(payload []byte) (request, error) {
	var req request
	if err := json.Unmarshal(payload, &req); err != nil {
		return req, err
	}
	if req.SessionID == "" && req.CorrelationID == "" && req.Messages == nil {
		var wrapped struct {
			Data *request `json:"data"`
		}
		if json.Unmarshal(payload, &wrapped) == nil && wrapped.Data != nil {
			req = *wrapped.Data
		}
	}
	if req.SessionID == "" {
		req.SessionID = ipc.DefaultSessionID
	}
	return req, nil
}

func handleAppend(c *sdk.Call) error {
	req, err := decode(c.Payload())
	if err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("session: dropped an append that does not decode: %v", err))
		return nil
	}
	if err := ValidateID(req.SessionID); err != nil {
		c.Log(hostapi.LogWarn, "session: dropped an append: "+err.Error())
		return nil
	}
	return appendMessages(c, req.SessionID, req.Messages, req.Usage, req.CostUSD)
}

// replyTo checks a request's correlation id and registers the failure
// reply, so a requester hears back even if this call traps or times out.
// ok is false when the request is done with: it had nowhere to be answered
// (it was logged), or it did not decode (the error was answered; err is
// that publish's failure).
func replyTo(c *sdk.Call, op string, payload []byte) (req request, topic string, ok bool, err error) {
	req, derr := decode(payload)
	if derr != nil {
		// A correlation id may still be readable from a payload whose other
		// fields are of the wrong type.
		var id struct {
			CorrelationID string `json:"correlation_id"`
		}
		_ = json.Unmarshal(payload, &id)
		req = request{CorrelationID: id.CorrelationID}
	}
	if req.CorrelationID == "" || strings.Contains(req.CorrelationID, ".") {
		c.Log(hostapi.LogWarn, fmt.Sprintf("session: dropped a %s request: correlation_id %q is missing or has a '.', so no reply topic exists", op, req.CorrelationID))
		return req, "", false, nil
	}
	topic = ReplyTopic(op, req.CorrelationID)
	if verr := ipc.ValidateTopic(topic); verr != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("session: dropped a %s request: correlation_id %q cannot name a reply topic: %v", op, req.CorrelationID, verr))
		return req, "", false, nil
	}
	if b, merr := json.Marshal(ErrorReply{CorrelationID: req.CorrelationID, Error: "session: the session store did not finish the " + op + " request"}); merr == nil {
		if ferr := c.SetFailureReply(topic, b); ferr != nil {
			c.Log(hostapi.LogWarn, fmt.Sprintf("session: %s %q: failure reply not registered: %v", op, req.CorrelationID, ferr))
		}
	}
	if derr != nil {
		return req, topic, false, fail(c, topic, req.CorrelationID, fmt.Sprintf("session: %s request does not decode: %v", op, derr))
	}
	return req, topic, true, nil
}

// fail answers a request with an error and logs it.
func fail(c *sdk.Call, topic, correlationID, msg string) error {
	c.Log(hostapi.LogWarn, msg)
	return c.PublishJSON(topic, ErrorReply{CorrelationID: correlationID, Error: msg})
}

func handleGetMessages(c *sdk.Call) error {
	req, topic, ok, err := replyTo(c, OpGetMessages, c.Payload())
	if !ok {
		return err
	}
	if err := ValidateID(req.SessionID); err != nil {
		return fail(c, topic, req.CorrelationID, "session: get_messages: "+err.Error())
	}
	// Append and read in one handler call: the kernel runs this capsule's
	// calls for one principal one at a time, in arrival order, so no other
	// append or clear of this principal can land between the write and
	// the read (and other principals have other KV namespaces). That is
	// what makes append_before_read atomic without a lock or CAS.
	if req.AppendBeforeRead {
		if err := appendMessages(c, req.SessionID, req.Messages, req.Usage, req.CostUSD); err != nil {
			return fail(c, topic, req.CorrelationID, "session: get_messages: "+err.Error())
		}
	}
	if req.Compaction != nil {
		if err := setCompaction(c, req.SessionID, *req.Compaction); err != nil {
			return fail(c, topic, req.CorrelationID, "session: get_messages: "+err.Error())
		}
	}
	r, err := load(c, req.SessionID)
	if err != nil {
		return fail(c, topic, req.CorrelationID, "session: get_messages: "+err.Error())
	}
	if r.Messages == nil {
		r.Messages = []ipc.Message{}
	}
	return c.PublishJSON(topic, MessagesReply{CorrelationID: req.CorrelationID, Messages: r.Messages, Compaction: currentCompaction(r)})
}

func handleClear(c *sdk.Call) error {
	req, topic, ok, err := replyTo(c, OpClear, c.Payload())
	if !ok {
		return err
	}
	if err := ValidateID(req.SessionID); err != nil {
		return fail(c, topic, req.CorrelationID, "session: clear: "+err.Error())
	}
	id, err := newID(c)
	if err != nil {
		return fail(c, topic, req.CorrelationID, "session: clear: "+err.Error())
	}
	if err := save(c, id, Record{ParentSessionID: req.SessionID}); err != nil {
		return fail(c, topic, req.CorrelationID, "session: clear: "+err.Error())
	}
	announce(c, EventCreated, id)
	return c.PublishJSON(topic, ClearReply{CorrelationID: req.CorrelationID, NewSessionID: id, OldSessionID: req.SessionID})
}

// maxIDAttempts bounds the search for an unused session id.
const maxIDAttempts = 64

// newID names a new session: "s" and the host clock in hex nanoseconds,
// with a counter appended should that name be taken (create-if-absent).
// The host API offers no randomness, and none is needed: ids are unique
// within one principal's namespace, and this capsule's calls for a
// principal run one at a time.
func newID(c *sdk.Call) (string, error) {
	base := "s" + strconv.FormatInt(c.Now().UnixNano(), 16)
	id := base
	for i := 1; i <= maxIDAttempts; i++ {
		taken, err := exists(c, id)
		if err != nil {
			return "", err
		}
		if !taken {
			return id, nil
		}
		id = base + "-" + strconv.Itoa(i)
	}
	return "", fmt.Errorf("no unused session id after %d attempts from %q", maxIDAttempts, base)
}
