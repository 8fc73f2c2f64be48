package react

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// userInput is user.v1.prompt's payload (ipc.UserInput, read leniently).
type userInput struct {
	Text      string            `json:"text"`
	SessionID string            `json:"session_id"`
	Context   json.RawMessage   `json:"context"`
	Images    []ipc.PromptImage `json:"images"`
}

// maxPromptImages bounds the images of one prompt.
const maxPromptImages = 16

// imageTypes are the media types the providers take.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// promptMessage is the user message of in: its text alone, or the text
// and then its images as parts. The error says which image is refused.
func promptMessage(in userInput) (ipc.Message, error) {
	if len(in.Images) == 0 {
		return ipc.TextMessage(ipc.RoleUser, in.Text), nil
	}
	if len(in.Images) > maxPromptImages {
		return ipc.Message{}, fmt.Errorf("%d images, more than the %d one prompt may carry", len(in.Images), maxPromptImages)
	}
	parts := make([]ipc.ContentPart, 0, len(in.Images)+1)
	if strings.TrimSpace(in.Text) != "" {
		// A prompt of images alone has no text part: providers refuse
		// an empty text block.
		parts = append(parts, ipc.ContentPart{Type: ipc.PartText, Text: in.Text})
	}
	for i, img := range in.Images {
		if !imageTypes[img.MediaType] {
			return ipc.Message{}, fmt.Errorf("image %d is %s; the models take image/png, image/jpeg, image/gif or image/webp", i+1, shown(img.MediaType))
		}
		if img.Data == "" {
			return ipc.Message{}, fmt.Errorf("image %d has no data", i+1)
		}
		if _, err := base64.StdEncoding.DecodeString(img.Data); err != nil {
			return ipc.Message{}, fmt.Errorf("image %d: its data is not base64: %w", i+1, err)
		}
		parts = append(parts, ipc.ContentPart{Type: ipc.PartImage, Data: img.Data, MediaType: img.MediaType})
	}
	return ipc.Message{Role: ipc.RoleUser, Content: ipc.MessageContent{Kind: ipc.ContentMultiPart, Parts: parts}}, nil
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
	case ipc.ActionCompact:
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
	if strings.TrimSpace(in.Text) == "" && len(in.Images) == 0 && pc.Action != ipc.ActionCompact {
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
	if pc.Action == ipc.ActionCompact {
		return compactNow(c, t)
	}
	msg, err := promptMessage(in)
	if err != nil {
		return publishFinal(c, t.SessionID, t.TurnID, ipc.OutcomeError, fmt.Sprintf("The prompt was not taken: %v.", err))
	}
	history, comp, err := appendAndRead(c, t.SessionID, []ipc.Message{msg}, nil, nil)
	if notTaken(err) {
		// The store's queue was full: the prompt was not added, so the
		// client may send it again, as for a busy agent.
		return publishFinal(c, t.SessionID, t.TurnID, ipc.OutcomeBusy, fmt.Sprintf("The prompt was not added to session %q: %v", t.SessionID, err))
	}
	if err != nil {
		return publishFinal(c, t.SessionID, t.TurnID, ipc.OutcomeError, fmt.Sprintf("The prompt was not added to session %q: %v", t.SessionID, err))
	}
	return assemble(c, t, view(t, history, comp, t.ToolResultMax))
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
