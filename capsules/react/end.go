package react

import (
	"fmt"
	"strings"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// finish ends t: calls still running are cancelled, the turn's keys are
// forgotten, and its one final response goes out.
func finish(c *sdk.Call, t *turn, outcome, text string) error {
	// A turn ending while its model still streams (cancelled,
	// pre-empted, timed out, failed) stops that request too: the network
	// providers bind its id as their call's cancel key. An answer, an
	// empty one or the iteration cap ends after the stream's Done.
	streaming := (t.Phase == phaseStream || t.Phase == phaseCompact) && t.RequestID != "" &&
		outcome != ipc.OutcomeAnswer && outcome != ipc.OutcomeEmpty && outcome != ipc.OutcomeIterationCap
	cancelRunning(c, t, streaming)
	forget(c, t)
	if outcome != ipc.OutcomeAnswer {
		c.Log(hostapi.LogInfo, fmt.Sprintf("react: session %q: turn ended (%s): %s", t.SessionID, outcome, text))
	}
	r := ipc.AgentResponse{Text: text, IsFinal: true, SessionID: t.SessionID, Outcome: outcome, TurnID: t.TurnID,
		Provider: t.Provider, Defaulted: t.Defaulted, Model: t.Model, Usage: t.Usage}
	if t.Usage != nil {
		r.CostUSD = turnCost(c, t.Provider, t.Model, *t.Usage)
	}
	return publishResponse(c, r)
}

// publishFinal publishes a final agent_response.
func publishFinal(c *sdk.Call, session, turnID, outcome, text string) error {
	return publishResponse(c, ipc.AgentResponse{Text: text, IsFinal: true, SessionID: session, Outcome: outcome, TurnID: turnID})
}

// publishResponse publishes final response r.
func publishResponse(c *sdk.Call, r ipc.AgentResponse) error {
	session, turnID, outcome, text := r.SessionID, r.TurnID, r.Outcome, r.Text
	payload, err := ipc.EncodePayload(r)
	if err != nil {
		return err
	}
	if turnID != "" {
		// The answer to the prompt request the turn id correlates.
		err = c.PublishReply(ipc.AgentResponseTopic, turnID, payload)
	} else {
		err = c.Publish(ipc.AgentResponseTopic, payload)
	}
	if err != nil && outcome != ipc.OutcomeError {
		// Say so rather than end in silence (an answer over the bus's
		// message limit, say); this one is short.
		c.Log(hostapi.LogWarn, fmt.Sprintf("react: session %q: final response (%s, %d bytes) not published: %v", session, outcome, len(text), err))
		return publishFinal(c, session, turnID, ipc.OutcomeError, fmt.Sprintf("The turn ended (%s) but its final response (%d bytes) could not be sent: %v", outcome, len(text), err))
	}
	if err != nil {
		return fmt.Errorf("react: session %q: final response (%s) not published: %w", session, outcome, err)
	}
	return nil
}

// cancelRunning asks for the dispatched calls of t that have not answered
// to be interrupted (the kernel's cancel listener), and with model its
// model request.
func cancelRunning(c *sdk.Call, t *turn, model bool) {
	var ids []string
	if model {
		ids = append(ids, t.RequestID)
	}
	for _, call := range t.Calls {
		if call.Args != nil && !call.Done && !call.Hooked { // a hooked call has run
			ids = append(ids, call.CallID)
		}
	}
	if len(ids) == 0 {
		return
	}
	payload, err := ipc.EncodePayload(ipc.ToolCancelRequest{CallIDs: ids})
	if err == nil {
		err = c.Publish(ipc.ToolRequestCancelTopic, payload)
	}
	if err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("react: session %q: cancel of %v not published: %v", t.SessionID, ids, err))
	}
}

// nowMS is the host clock in milliseconds.
func nowMS(c *sdk.Call) int64 { return c.Now().UnixMilli() }

// overdue says whether t's phase has run past its limit at now, and if so
// what to tell the user. In the tool phase, time while an approval is
// pending does not count.
func overdue(t *turn, l limits, now int64) (string, bool) {
	switch t.Phase {
	case phasePrompt:
		if now-t.PhaseStart >= l.promptMS {
			return fmt.Sprintf("Timed out: the prompt builder did not answer within %d s (%s).", l.promptMS/1000, envPromptTimeout), true
		}
	case phaseStream, phaseCompact:
		if now-t.PhaseStart >= l.streamMS {
			return fmt.Sprintf("Timed out: the provider %q sent nothing for %d s (%s).", t.Provider, l.streamMS/1000, envStreamTimeout), true
		}
	case phaseTools:
		end := now
		if len(t.Approvals) > 0 && t.PausedAt > 0 {
			end = t.PausedAt
		}
		if end-t.PhaseStart >= l.toolMS {
			var waiting []string
			for _, call := range t.Calls {
				if !call.Done {
					waiting = append(waiting, call.Name)
				}
			}
			return fmt.Sprintf("Timed out: the tool calls (%s) did not finish within %d s (%s).", strings.Join(waiting, ", "), l.toolMS/1000, envToolTimeout), true
		}
	}
	return "", false
}

// expire ends t with outcome timeout if its phase is overdue, reporting
// whether it did.
func expire(c *sdk.Call, t *turn, l limits) (bool, error) {
	msg, over := overdue(t, l, nowMS(c))
	if !over {
		return false, nil
	}
	if t.Phase == phaseCompact && t.Compacting != nil {
		// A summary that does not come is a failed compaction: the
		// history goes out as it is.
		cancelRunning(c, t, true)
		return true, compactionFailed(c, t, *t.Compacting, nil, fmt.Sprintf("the summary did not come within %d s (%s)", l.streamMS/1000, envStreamTimeout))
	}
	return true, finish(c, t, ipc.OutcomeTimeout, msg)
}

// handleTick enforces the phase limits of every running turn of the
// principal the tick is for.
func handleTick(c *sdk.Call) error {
	keys, err := c.KVList(keyTurn)
	if err != nil {
		return fmt.Errorf("react: tick: %w", err)
	}
	l := readLimits(c)
	var errs []string
	for _, k := range keys {
		t, ok := loadTurn(c, strings.TrimPrefix(k, keyTurn))
		if !ok {
			continue
		}
		if _, err := expire(c, t, l); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("react: tick: %s", strings.Join(errs, "; "))
	}
	return nil
}
