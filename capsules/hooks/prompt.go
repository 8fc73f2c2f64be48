package hooks

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// ctxPrefix keys the context a prompt's hooks added, until the prompt
// builder assembles that turn: ~ctx/<session id>. seenPrefix keys the
// sessions whose SessionStart hooks ran in this process: ~seen/<session id>.
const (
	ctxPrefix  = "~ctx/"
	seenPrefix = "~seen/"
)

// handlePrompt is the interceptor on user.v1.prompt, ahead of the agent
// loop: a session's first prompt in this process runs the SessionStart
// hooks, every prompt the UserPromptSubmit hooks. What they add is kept
// for the turn's assembly (handleBeforeBuild); a UserPromptSubmit hook
// that blocks ends the turn before it starts, with its reason.
func handlePrompt(c *sdk.Call) error {
	if c.SourceID() == c.CapsuleID() {
		return nil // the relay of a prompt whose hooks ran (relay)
	}
	var in ipc.UserInput
	if err := json.Unmarshal(c.Payload(), &in); err != nil || strings.TrimSpace(in.Text) == "" {
		return nil // a cancel, or nothing the agent would run
	}
	var pc ipc.PromptContext
	if len(in.Context) > 0 && string(in.Context) != "null" {
		if err := json.Unmarshal(in.Context, &pc); err != nil || pc.Action != "" {
			return nil // the agent answers what it cannot read
		}
	}
	session := in.SessionID
	if session == "" {
		session = ipc.DefaultSessionID
	}
	if !ipc.ValidSessionID(session) {
		return nil
	}
	var added []string
	if starts, cfg := hooksFor(c, SessionStart, ""); len(starts) > 0 {
		if _, seen, err := c.KVGet(seenPrefix + session); err == nil && !seen {
			if err := c.KVSet(seenPrefix+session, []byte("1")); err != nil {
				c.Log(hostapi.LogWarn, fmt.Sprintf("hooks: session %q not marked as started: %v", session, err))
			}
			for _, h := range starts {
				v, _ := run(c, h, cfg, Input{HookEventName: SessionStart, SessionID: session, Source: "startup"})
				logVerdict(c, h, SessionStart, v)
				if v.Block {
					c.Log(hostapi.LogWarn, fmt.Sprintf("hooks: %s asked to block; a SessionStart hook cannot (ignored): %s", h.describe(SessionStart), v.Reason))
				}
				if v.Context != "" {
					added = append(added, v.Context)
				}
			}
		}
	}
	submits, cfg := hooksFor(c, UserPromptSubmit, "")
	for _, h := range submits {
		v, _ := run(c, h, cfg, Input{HookEventName: UserPromptSubmit, SessionID: session, Prompt: in.Text})
		logVerdict(c, h, UserPromptSubmit, v)
		if v.Block {
			return block(c, session, pc.TurnID, fmt.Sprintf("The prompt was blocked by a UserPromptSubmit hook: %s", v.Reason))
		}
		if v.Context != "" {
			added = append(added, v.Context)
		}
	}
	if len(added) == 0 {
		if err := c.KVDelete(ctxPrefix + session); err != nil {
			return err
		}
	} else if err := c.KVSet(ctxPrefix+session, []byte(shorten(strings.Join(added, "\n\n"), maxReason))); err != nil {
		return block(c, session, pc.TurnID, fmt.Sprintf("The prompt was not run: the context its hooks added could not be kept: %v", err))
	}
	if stops, _ := hooksFor(c, Stop, ""); len(stops) > 0 {
		_, err := relay(c)
		return err
	}
	return nil
}

// block ends a prompt's turn before it starts: the chain stops here, and
// the frontend gets the final response the agent would have sent.
func block(c *sdk.Call, session, turnID, text string) error {
	c.Final(nil)
	// Context a delete leaves behind is overwritten by the session's next
	// prompt before the agent could read it (handlePrompt sets or deletes it).
	_ = c.KVDelete(ctxPrefix + session)
	c.Log(hostapi.LogInfo, fmt.Sprintf("hooks: session %q: %s", session, text))
	r := ipc.AgentResponse{Text: text, IsFinal: true, SessionID: session, Outcome: ipc.OutcomeError, TurnID: turnID}
	payload, err := ipc.EncodePayload(r)
	if err != nil {
		return fmt.Errorf("hooks: blocked prompt's response: %w", err)
	}
	if _, corr := c.Serving(); corr != "" {
		return c.Reply(payload)
	}
	return c.Publish(ipc.AgentResponseTopic, payload)
}

// beforeBuild is the part of prompt_builder.v1.hook.before_build read here.
type beforeBuild struct {
	RequestID     string `json:"request_id"`
	SessionID     string `json:"session_id"`
	ResponseTopic string `json:"response_topic"`
}

// handleBeforeBuild answers the prompt builder's before_build with the
// context this session's prompt hooks added (prependContext, put before
// the user's message and never stored), once; or with {} (nothing).
func handleBeforeBuild(c *sdk.Call) error {
	var req beforeBuild
	if err := json.Unmarshal(c.Payload(), &req); err != nil || !strings.HasPrefix(req.ResponseTopic, hookResponsePrefix) {
		return nil
	}
	answer := []byte(`{}`)
	if ipc.ValidSessionID(req.SessionID) {
		if text, ok, err := c.KVGet(ctxPrefix + req.SessionID); err == nil && ok {
			// Read once: if the delete fails the next prompt's hooks
			// replace the context before the agent asks again.
			_ = c.KVDelete(ctxPrefix + req.SessionID)
			if answer, err = json.Marshal(map[string]string{"prependContext": string(text)}); err != nil {
				return fmt.Errorf("hooks: before_build answer: %w", err)
			}
		}
	}
	return c.Publish(req.ResponseTopic, answer)
}
