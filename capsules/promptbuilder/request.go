package promptbuilder

import (
	"encoding/json"
	"fmt"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// Request is prompt_builder.v1.assemble's payload.
type Request struct {
	RequestID    string        `json:"request_id"`
	SessionID    string        `json:"session_id,omitempty"`
	Messages     []ipc.Message `json:"messages"`
	SystemPrompt string        `json:"system_prompt"`
	Model        string        `json:"model,omitempty"`
	Provider     string        `json:"provider,omitempty"`
}

// Response answers a request that could be assembled.
type Response struct {
	RequestID         string                  `json:"request_id"`
	SessionID         string                  `json:"session_id,omitempty"`
	SystemPrompt      string                  `json:"system_prompt"`
	UserContextPrefix string                  `json:"user_context_prefix"`
	Tools             []ipc.LLMToolDefinition `json:"tools"`
	Messages          []ipc.Message           `json:"messages"`
}

// ErrorResponse answers a request that could not be: the orchestrator ends
// the turn at once with it.
type ErrorResponse struct {
	RequestID string `json:"request_id"`
	SessionID string `json:"session_id,omitempty"`
	Error     string `json:"error"`
}

// ids are what a request must carry to be correlated; they are read on
// their own so that a request whose other fields are malformed can still be
// answered.
type ids struct {
	RequestID string `json:"request_id"`
	SessionID string `json:"session_id"`
}

// maxIDBytes bounds a request id: it names a topic segment of the hook
// responses.
const maxIDBytes = 128

// decodeRequest reads the payload, tolerating the {"data": {...}} wrapping
// of older SDKs (spec §1). The ids are returned even when the rest does not
// decode.
func decodeRequest(payload []byte) (Request, error) {
	var req Request
	err := json.Unmarshal(payload, &req)
	if req.RequestID == "" && req.SessionID == "" && req.Messages == nil {
		var wrapped struct {
			Data json.RawMessage `json:"data"`
		}
		if json.Unmarshal(payload, &wrapped) == nil && len(wrapped.Data) > 0 {
			req = Request{}
			err = json.Unmarshal(wrapped.Data, &req)
			payload = wrapped.Data
		}
	}
	if err != nil {
		var id ids
		_ = json.Unmarshal(payload, &id)
		return Request{RequestID: id.RequestID, SessionID: id.SessionID}, fmt.Errorf("invalid request: %w", err)
	}
	return req, nil
}

// validate checks the ids: the request id names a topic segment (the hook
// responses' scope) and the session id is the session store's kind.
func (r Request) validate() error {
	if r.RequestID == "" {
		return fmt.Errorf("missing request_id")
	}
	if err := validID(r.RequestID, maxIDBytes); err != nil {
		return fmt.Errorf("request_id: %w", err)
	}
	if r.SessionID != "" {
		if err := validID(r.SessionID, 64); err != nil {
			return fmt.Errorf("session_id: %w", err)
		}
	}
	return nil
}

// validID accepts 1 to max bytes of [A-Za-z0-9_-]: what a topic segment, a
// session id and an LLM API's id all accept.
func validID(id string, max int) error {
	if id == "" || len(id) > max {
		return fmt.Errorf("%q is not 1 to %d bytes", id, max)
	}
	for i := 0; i < len(id); i++ {
		b := id[i]
		if !('a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '_' || b == '-') {
			return fmt.Errorf("%q has a character outside [A-Za-z0-9_-]", id)
		}
	}
	return nil
}

// registerFailureReply makes the engine answer the request with an error
// should this call trap, time out or be dropped.
func registerFailureReply(c *sdk.Call, r Request) {
	b, err := json.Marshal(ErrorResponse{RequestID: r.RequestID, SessionID: r.SessionID,
		Error: "prompt builder: the assembly did not finish"})
	if err == nil {
		err = c.SetFailureReply(ResponseTopic, b)
	}
	if err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("prompt builder: request %q: failure reply not registered: %v", r.RequestID, err))
	}
}

// answerError answers r with msg and logs it.
func answerError(c *sdk.Call, r Request, msg string) error {
	c.Log(hostapi.LogWarn, fmt.Sprintf("prompt builder: request %q: %s", r.RequestID, msg))
	return c.PublishJSON(ResponseTopic, ErrorResponse{RequestID: r.RequestID, SessionID: r.SessionID, Error: "prompt builder: " + msg})
}
