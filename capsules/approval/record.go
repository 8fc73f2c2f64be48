package approval

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/astrid-go/astrid/sdk"
)

// The KV layout, in the invoking principal's namespace (so one principal's
// questions, passes and allowances are invisible to another). '~' keys are
// volatile: in this kernel process's memory only.
const (
	// pendingPrefix + request id = the pending record of an open question.
	pendingPrefix = "~pending/"
	// callPrefix + call id = the request id asking about that call, so a
	// second request with the same call id is not asked twice and a cancel
	// finds its question.
	callPrefix = "~call/"
	// passPrefix + call id: the approved call's one re-publish passes.
	passPrefix = "~pass/"
	// cancelledPass is a pass whose call was cancelled before its
	// re-publish arrived: the re-publish is dropped.
	cancelledPass = "cancelled"
)

// pending is an open question: the call it holds up and when it lapses.
type pending struct {
	CallID  string `json:"call_id"`
	Tool    string `json:"tool"`
	Capsule string `json:"capsule"`
	// Request is the tool_execute_request as the caller published it,
	// published again unchanged once approved.
	Request json.RawMessage `json:"request"`
	// Deadline is when the question lapses, in host-clock Unix nanoseconds.
	Deadline int64 `json:"deadline"`
	// TimeoutSecs is the timeout it was asked with, for the refusal text.
	TimeoutSecs float64 `json:"timeout_secs"`
	// ReplyTo is where the caller's request wanted its answer (empty when
	// it was published as no request): the call goes on as that request.
	ReplyTo string `json:"reply_to,omitempty"`
}

// maxCallIDBytes bounds a call id kept as part of a KV key (1 KiB).
const maxCallIDBytes = 512

// checkCallID refuses a call id that cannot be part of a KV key.
func checkCallID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("empty call id")
	case len(id) > maxCallIDBytes:
		return fmt.Errorf("call id of %d bytes (at most %d)", len(id), maxCallIDBytes)
	case !utf8.ValidString(id) || strings.ContainsRune(id, 0):
		return fmt.Errorf("call id is not UTF-8 text without NUL")
	}
	return nil
}

func loadPending(c *sdk.Call, requestID string) (pending, bool, error) {
	var p pending
	raw, ok, err := c.KVGet(pendingPrefix + requestID)
	if err != nil || !ok {
		return p, false, err
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, false, fmt.Errorf("pending record %q: %w", requestID, err)
	}
	return p, true, nil
}

// savePending keeps p as the open question requestID, indexed by its call.
func savePending(c *sdk.Call, requestID string, p pending) error {
	raw, err := json.Marshal(p)
	if err != nil {
		return err
	}
	if err := c.KVSet(pendingPrefix+requestID, raw); err != nil {
		return err
	}
	return c.KVSet(callPrefix+p.CallID, []byte(requestID))
}

// settle removes the open question requestID about callID: it is answered
// once. (The kernel runs this capsule's calls for one principal one at a
// time, so no other answer can settle it between the read and this.)
func settle(c *sdk.Call, requestID, callID string) error {
	if err := c.KVDelete(pendingPrefix + requestID); err != nil {
		return err
	}
	return c.KVDelete(callPrefix + callID)
}

// maxIDAttempts bounds the search for an unused request id.
const maxIDAttempts = 64

// newRequestID names a question: the principal and the host clock in
// base-36 nanoseconds, with a counter appended should that name be taken.
// The host API offers no randomness, and none is needed: an answer counts
// only from an approver frontend and for the question's own principal,
// so knowing an id grants nothing. The principal is in it so that ids of
// different principals never meet in a frontend serving several.
func newRequestID(c *sdk.Call) (string, error) {
	base := "appr-" + c.Principal() + "-" + strconv.FormatInt(c.Now().UnixNano(), 36)
	id := base
	for i := 1; i <= maxIDAttempts; i++ {
		_, taken, err := c.KVGet(pendingPrefix + id)
		if err != nil {
			return "", err
		}
		if !taken {
			return id, nil
		}
		id = base + "-" + strconv.Itoa(i)
	}
	return "", fmt.Errorf("no unused request id after %d attempts from %q", maxIDAttempts, base)
}
