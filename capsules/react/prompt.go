package react

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// userInput is user.v1.prompt's payload (ipc.UserInput, read leniently).
type userInput struct {
	Text      string          `json:"text"`
	SessionID string          `json:"session_id"`
	Context   json.RawMessage `json:"context"`
}

// decodePrompt reads a user_input, tolerating the {"data": {...}} wrapping
// of older SDKs (spec §1); a missing session id is "default".
func decodePrompt(payload []byte) (userInput, error) {
	var in userInput
	if err := json.Unmarshal(payload, &in); err != nil {
		return in, err
	}
	if in.Text == "" && in.SessionID == "" && in.Context == nil {
		var wrapped struct {
			Data *userInput `json:"data"`
		}
		if json.Unmarshal(payload, &wrapped) == nil && wrapped.Data != nil {
			in = *wrapped.Data
		}
	}
	if in.SessionID == "" {
		in.SessionID = ipc.DefaultSessionID
	}
	return in, nil
}

// shown is s quoted for a message, cut to 64 bytes on a rune boundary.
func shown(s string) string {
	if len(s) > 64 {
		s = strings.ToValidUTF8(s[:64], "") + "…"
	}
	return fmt.Sprintf("%q", s)
}

// handlePrompt starts a turn, or cancels one (context.action cancel_turn).
func handlePrompt(c *sdk.Call) error {
	in, err := decodePrompt(c.Payload())
	if err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("react: dropped a prompt that is not a user_input: %v", err))
		return nil
	}
	var pc ipc.PromptContext
	if len(in.Context) > 0 && string(in.Context) != "null" {
		if err := json.Unmarshal(in.Context, &pc); err != nil {
			return publishFinal(c, in.SessionID, "", ipc.OutcomeError, fmt.Sprintf("The prompt's context is not a prompt context object: %v", err))
		}
	}
	if pc.TurnID != "" && !validID(pc.TurnID) {
		return publishFinal(c, in.SessionID, "", ipc.OutcomeError, fmt.Sprintf("Invalid turn id %s: use 1 to 64 ASCII letters, digits, '-' or '_'.", shown(pc.TurnID)))
	}
	if !validID(in.SessionID) {
		return publishFinal(c, in.SessionID, pc.TurnID, ipc.OutcomeError, fmt.Sprintf("Invalid session id %s: use 1 to 64 ASCII letters, digits, '-' or '_'.", shown(in.SessionID)))
	}
	switch pc.Action {
	case ipc.ActionCancelTurn:
		return cancelTurn(c, in.SessionID, pc.TurnID)
	case "":
	default:
		return publishFinal(c, in.SessionID, pc.TurnID, ipc.OutcomeError, fmt.Sprintf("Unknown prompt action %s.", shown(pc.Action)))
	}

	if old, busy := loadTurn(c, in.SessionID); busy {
		// A newer prompt pre-empts the running turn, which still gets its
		// one final response (a timeout, if it was overdue anyway).
		if ended, err := expire(c, old, readLimits(c)); err != nil || ended {
			if err != nil {
				return err
			}
		} else if err := finish(c, old, ipc.OutcomeCancelled, "Cancelled: a newer prompt on this session took over."); err != nil {
			return err
		}
	}
	if strings.TrimSpace(in.Text) == "" {
		return publishFinal(c, in.SessionID, pc.TurnID, ipc.OutcomeError, "The prompt is empty.")
	}
	// Checked before the prompt touches the history: a busy answer means
	// nothing ran, and the client may send the same prompt again.
	if running, err := c.KVList(keyTurn); err == nil {
		if limit := positiveConfig(c, envMaxInFlight, defaultMaxInFlight); len(running) >= limit {
			return publishFinal(c, in.SessionID, pc.TurnID, ipc.OutcomeBusy, fmt.Sprintf(
				"The agent did not take this prompt: %d of your turns are running, its limit (%s). Nothing ran; try again later.", len(running), envMaxInFlight))
		}
	}
	t := &turn{SessionID: in.SessionID, TurnID: pc.TurnID, Phase: phasePrompt}
	chooseModel(c, t, pc)
	if !validID(t.Provider) {
		return publishFinal(c, t.SessionID, t.TurnID, ipc.OutcomeError, fmt.Sprintf("Invalid provider name %s: use 1 to 64 ASCII letters, digits, '-' or '_'.", shown(t.Provider)))
	}
	history, err := appendAndRead(c, t.SessionID, []ipc.Message{ipc.TextMessage(ipc.RoleUser, in.Text)}, nil, nil)
	if err != nil {
		return publishFinal(c, t.SessionID, t.TurnID, ipc.OutcomeError, fmt.Sprintf("The prompt was not added to session %q: %v", t.SessionID, err))
	}
	return assemble(c, t, history)
}

// cancelTurn ends session's running turn with outcome cancelled; with a
// turn id, only if it is that turn. An idle session has nothing to cancel.
func cancelTurn(c *sdk.Call, session, turnID string) error {
	t, ok := loadTurn(c, session)
	if !ok || turnID != "" && t.TurnID != turnID {
		return nil
	}
	return finish(c, t, ipc.OutcomeCancelled, "Cancelled.")
}
