package react

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// generate sends t's next model request over msgs (the prompt builder's,
// or the history after a tool round, prefix applied) with the turn's frame.
func generate(c *sdk.Call, t *turn, msgs []ipc.Message) error {
	f, err := loadFrame(c, t.SessionID)
	if err != nil {
		return finish(c, t, ipc.OutcomeError, fmt.Sprintf("The model request was not built: %v", err))
	}
	topic := ipc.LLMGenerateTopic(t.Provider)
	streamers, err := c.Interceptors(topic)
	if err == nil && len(streamers) == 0 {
		err = fmt.Errorf("no LLM provider %q is loaded (nothing handles %s); choose a loaded one with --provider or astrid models set <provider>:<model> (astrid models list shows them)", t.Provider, topic)
	}
	if err != nil {
		return finish(c, t, ipc.OutcomeError, "The model was not asked: "+err.Error()+".")
	}
	if why := quotaRefusal(c); why != "" {
		return finish(c, t, ipc.OutcomeError, why)
	}
	t.Iterations++
	t.Phase, t.RequestID, t.Streamers = phaseStream, newID(c, "req"), streamers
	t.PhaseStart = nowMS(c)
	t.Text, t.Streamed, t.Calls, t.Approvals, t.PausedAt = "", nil, nil, nil, 0
	if err := c.KVSet(keyRequest+t.RequestID, []byte(t.SessionID)); err != nil {
		return finish(c, t, ipc.OutcomeError, fmt.Sprintf("The model request was not recorded: %v", err))
	}
	if err := saveTurn(c, t); err != nil {
		return finish(c, t, ipc.OutcomeError, err.Error())
	}
	req, err := ipc.LLMRequest{RequestID: t.RequestID, Model: t.Model, Messages: msgs, Tools: f.Tools, System: f.System}.MarshalJSON()
	if err == nil && t.Budget > 0 && !t.NoCompact && estimateTokens(len(req)) > t.Budget {
		// Over the threshold: older turns are summarized first (the one
		// comparison is all a request below it pays).
		if t.Compactions >= maxCompactionsPerTurn {
			t.NoCompact = true
		} else {
			dropKey(c, keyRequest+t.RequestID)
			t.Iterations--
			return startCompaction(c, t, msgs, estimateTokens(len(req)), false)
		}
	}
	if err == nil && t.Announce != nil {
		t.Announce.TokensAfter = estimateTokens(len(req))
		publishEvent(c, ipc.AgentCompactedTopic, *t.Announce)
		t.Announce = nil
		err = saveTurn(c, t)
	}
	if err == nil {
		err = c.Request(topic, req, hostapi.Request{ReplyTo: ipc.LLMStreamTopic(t.Provider), CorrelationID: t.RequestID, Timeout: requestTimeout})
	}
	if err != nil {
		return finish(c, t, ipc.OutcomeError, fmt.Sprintf("The request to provider %q was not sent: %v", t.Provider, err))
	}
	return nil
}

// streamMessage is an llm_stream_event read loosely: the event is decoded
// only once the request is known to be a running turn's.
type streamMessage struct {
	RequestID string          `json:"request_id"`
	Event     json.RawMessage `json:"event"`
}

// handleStream follows a provider's stream for the turn that asked.
func handleStream(c *sdk.Call) error {
	var m streamMessage
	if f, ok := ipc.AsRequestFailed(c.Payload()); ok {
		// The kernel's answer for a provider that did not take the
		// request, failed, or whose event was lost at this capsule's
		// queue: an error event of the request it names.
		ev, _ := ipc.StreamEvent{Kind: ipc.StreamError, Text: ipc.FailureText(f, "the model request")}.MarshalJSON()
		m = streamMessage{RequestID: f.CorrelationID, Event: ev}
	} else if err := json.Unmarshal(c.Payload(), &m); err != nil || m.RequestID == "" {
		c.Log(hostapi.LogDebug, "react: dropped a stream message without a request id")
		return nil
	}
	session, ok := sessionOf(c, keyRequest+m.RequestID)
	if !ok {
		return nil
	}
	t, ok := loadTurn(c, session)
	if !ok || (t.Phase != phaseStream && t.Phase != phaseCompact) || t.RequestID != m.RequestID {
		return nil
	}
	// The kernel speaks on a stream only to say that an event of it was
	// lost at this capsule's full queue (an error event).
	fromKernel := c.SourceID() == ipc.KernelSourceID
	if !fromKernel && !slices.Contains(t.Streamers, c.SourceID()) {
		c.Log(hostapi.LogWarn, fmt.Sprintf("react: session %q: ignored a stream event from %q, which does not provide %q", session, c.SourceID(), t.Provider))
		return nil
	}
	l := readLimits(c)
	if ended, err := expire(c, t, l); ended || err != nil {
		return err
	}
	var ev ipc.StreamEvent
	if err := ev.UnmarshalJSON(m.Event); err != nil {
		return finish(c, t, ipc.OutcomeError, fmt.Sprintf("The provider %q sent a malformed stream event: %v", t.Provider, err))
	}
	if t.Phase == phaseCompact && t.Compacting != nil {
		if fromKernel && ev.Kind != ipc.StreamError {
			return nil
		}
		t.PhaseStart = nowMS(c)
		return compactStream(c, t, ev)
	}
	if fromKernel {
		if ev.Kind != ipc.StreamError {
			return nil
		}
		return finish(c, t, ipc.OutcomeError, "The model's answer was cut: "+ev.Text+".")
	}
	t.PhaseStart = nowMS(c)
	switch ev.Kind {
	case ipc.StreamTextDelta:
		t.Text += ev.Text
		if err := saveTurn(c, t); err != nil {
			return finish(c, t, ipc.OutcomeError, err.Error())
		}
		return c.PublishJSON(ipc.AgentStreamDeltaTopic, ipc.AgentStreamDelta{SessionID: t.SessionID, RequestID: t.RequestID, Delta: ev.Text, TurnID: t.TurnID})
	case ipc.StreamReasoningDelta:
		// Shown, never kept: the answer and the history hold text only.
		if ev.Text != "" {
			if err := c.PublishJSON(ipc.AgentStreamDeltaTopic, ipc.AgentStreamDelta{SessionID: t.SessionID, RequestID: t.RequestID, Delta: ev.Text, TurnID: t.TurnID, Reasoning: true}); err != nil {
				return err
			}
		}
	case ipc.StreamToolCallStart:
		if ev.ID == "" || ev.Name == "" {
			return finish(c, t, ipc.OutcomeError, fmt.Sprintf("The provider %q sent a malformed stream event: a tool call without an id or a name.", t.Provider))
		}
		if !slices.ContainsFunc(t.Streamed, func(s streamedCall) bool { return s.ID == ev.ID }) {
			t.Streamed = append(t.Streamed, streamedCall{ID: ev.ID, Name: ev.Name})
		}
	case ipc.StreamToolCallDelta:
		// A delta for an id never started is dropped: providers use one id
		// from start to end (spec §2.4).
		if i := slices.IndexFunc(t.Streamed, func(s streamedCall) bool { return s.ID == ev.ID }); i >= 0 {
			t.Streamed[i].Args += ev.ArgsDelta
		}
	case ipc.StreamUsage:
		// One per request, its total (ipc.Usage): the turn's is their sum.
		t.addUsage(ev.Usage)
		countTokens(c, ev.Usage)
	case ipc.StreamError:
		return finish(c, t, ipc.OutcomeError, fmt.Sprintf("The provider %q failed: %s", t.Provider, ev.Text))
	case ipc.StreamDone:
		return streamDone(c, t, l)
	}
	// Saved after every event (a ToolCallEnd only says the provider is
	// alive): the phase clock and what the stream built so far.
	if err := saveTurn(c, t); err != nil {
		return finish(c, t, ipc.OutcomeError, err.Error())
	}
	return nil
}

// streamDone ends a model request: tool calls go out, or the text is the
// answer, or there was nothing.
func streamDone(c *sdk.Call, t *turn, l limits) error {
	dropKey(c, keyRequest+t.RequestID)
	if len(t.Streamed) > 0 {
		if t.Iterations >= l.maxIterations {
			// Checked before the calls run: their results could never be
			// shown to the model.
			return finish(c, t, ipc.OutcomeIterationCap, fmt.Sprintf("Stopped: the turn made its limit of %d model requests (%s) and the model still asked for tools.", l.maxIterations, envMaxIterations))
		}
		return dispatch(c, t)
	}
	if t.Text == "" {
		return finish(c, t, ipc.OutcomeEmpty, "The model returned no text and no tool call.")
	}
	// Stored before the answer goes out, and confirmed: a frontend that
	// stops the kernel on the final response (astrid -p) must not lose it.
	if _, _, err := appendTurn(c, t, []ipc.Message{ipc.TextMessage(ipc.RoleAssistant, t.Text)}); err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("react: session %q: the answer was not added to the history: %v", t.SessionID, err))
	}
	return finish(c, t, ipc.OutcomeAnswer, t.Text)
}
