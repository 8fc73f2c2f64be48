package react

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// assembleRequest is prompt_builder.v1.assemble's payload.
type assembleRequest struct {
	RequestID    string        `json:"request_id"`
	SessionID    string        `json:"session_id"`
	Messages     []ipc.Message `json:"messages"`
	SystemPrompt string        `json:"system_prompt"`
	Model        string        `json:"model"`
	Provider     string        `json:"provider"`
}

// AssembleResponse is prompt_builder.v1.response.assemble's payload: the
// prompt of a turn, or Error.
type AssembleResponse struct {
	RequestID         string            `json:"request_id"`
	SessionID         string            `json:"session_id"`
	SystemPrompt      string            `json:"system_prompt"`
	UserContextPrefix string            `json:"user_context_prefix"`
	Tools             []json.RawMessage `json:"tools"`
	Messages          []json.RawMessage `json:"messages"`
	Error             string            `json:"error,omitempty"`
}

// assemble asks the prompt builder for t's prompt over history.
func assemble(c *sdk.Call, t *turn, history []ipc.Message) error {
	builders, err := c.Interceptors(AssembleTopic)
	if err != nil {
		return publishFinal(c, t.SessionID, t.TurnID, ipc.OutcomeError, fmt.Sprintf("The prompt builder could not be found: %v", err))
	}
	if len(builders) == 0 {
		return publishFinal(c, t.SessionID, t.TurnID, ipc.OutcomeError, "No prompt builder is loaded (nothing handles "+AssembleTopic+").")
	}
	t.RequestID = newID(c, "asm")
	t.PhaseStart = nowMS(c)
	if err := saveTurn(c, t); err != nil {
		return publishFinal(c, t.SessionID, t.TurnID, ipc.OutcomeError, err.Error())
	}
	// The request id leads back to the session when the kernel answers
	// for the prompt builder (its answer names no session).
	if err := c.KVSet(keyRequest+t.RequestID, []byte(t.SessionID)); err != nil {
		return finish(c, t, ipc.OutcomeError, fmt.Sprintf("The prompt request was not recorded: %v", err))
	}
	req, err := json.Marshal(assembleRequest{RequestID: t.RequestID, SessionID: t.SessionID, Messages: history, Model: t.Model, Provider: t.Provider})
	if err == nil {
		err = c.Request(AssembleTopic, req, hostapi.Request{ReplyTo: AssembledTopic, CorrelationID: t.RequestID, Timeout: requestTimeout})
	}
	if err != nil {
		return finish(c, t, ipc.OutcomeError, fmt.Sprintf("The prompt was not sent to the prompt builder: %v", err))
	}
	return nil
}

// handleAssembled takes the prompt builder's answer and asks the model.
func handleAssembled(c *sdk.Call) error {
	if f, ok := ipc.AsRequestFailed(c.Payload()); ok {
		// The kernel answers for a prompt builder that could not.
		session, known := sessionOf(c, keyRequest+f.CorrelationID)
		if c.SourceID() != ipc.KernelSourceID || !known {
			return nil
		}
		t, ok := loadTurn(c, session)
		if !ok || t.Phase != phasePrompt || t.RequestID != f.CorrelationID {
			return nil
		}
		return finish(c, t, ipc.OutcomeError, "The prompt builder did not answer: "+ipc.FailureText(f, "the prompt request")+".")
	}
	// The ids first: an answer whose other fields are garbage still ends
	// its turn, with an error, instead of leaving it to time out.
	var ids struct {
		RequestID string `json:"request_id"`
		SessionID string `json:"session_id"`
	}
	if err := decodeLenient(c.Payload(), &ids, func() bool { return ids.RequestID == "" && ids.SessionID == "" }); err != nil || !validID(ids.SessionID) {
		c.Log(hostapi.LogWarn, fmt.Sprintf("react: dropped a prompt builder answer without a valid session id (%v)", err))
		return nil
	}
	t, ok := loadTurn(c, ids.SessionID)
	if !ok || t.Phase != phasePrompt || t.RequestID != ids.RequestID {
		return nil // stale: another turn, or not this one's request
	}
	if builders, err := c.Interceptors(AssembleTopic); err != nil || !slices.Contains(builders, c.SourceID()) {
		c.Log(hostapi.LogWarn, fmt.Sprintf("react: session %q: ignored a prompt from %q, which does not handle %s", t.SessionID, c.SourceID(), AssembleTopic))
		return nil
	}
	if ended, err := expire(c, t, readLimits(c)); ended || err != nil {
		return err
	}
	var resp AssembleResponse
	if err := decodeLenient(c.Payload(), &resp, func() bool { return resp.RequestID == "" && resp.SessionID == "" }); err != nil {
		return finish(c, t, ipc.OutcomeError, fmt.Sprintf("The prompt builder's answer does not decode: %v", err))
	}
	if resp.Error != "" {
		return finish(c, t, ipc.OutcomeError, "The prompt builder failed: "+resp.Error)
	}
	var f frame
	f.System = resp.SystemPrompt
	for i, raw := range resp.Tools {
		var d ipc.LLMToolDefinition
		if err := json.Unmarshal(raw, &d); err != nil {
			c.Log(hostapi.LogWarn, fmt.Sprintf("react: session %q: tool %d from the prompt builder left out: %v", t.SessionID, i, err))
			continue
		}
		f.Tools = append(f.Tools, d)
	}
	msgs := parseMessages(c, resp.Messages, "prompt builder")
	if len(msgs) == 0 {
		return finish(c, t, ipc.OutcomeError, "The prompt builder returned no messages.")
	}
	if err := saveFrame(c, t.SessionID, f); err != nil {
		return finish(c, t, ipc.OutcomeError, fmt.Sprintf("The turn's prompt was not kept: %v", err))
	}
	t.Prefix = resp.UserContextPrefix
	return generate(c, t, withPrefix(msgs, t.Prefix))
}

// decodeLenient unmarshals payload into v; when empty() says nothing was
// read, it tries the {"data": {...}} wrapping of older SDKs (spec §1).
func decodeLenient(payload []byte, v any, empty func() bool) error {
	if err := json.Unmarshal(payload, v); err != nil {
		return err
	}
	if empty() {
		var wrapped struct {
			Data json.RawMessage `json:"data"`
		}
		if json.Unmarshal(payload, &wrapped) == nil && len(wrapped.Data) > 0 {
			return json.Unmarshal(wrapped.Data, v)
		}
	}
	return nil
}
