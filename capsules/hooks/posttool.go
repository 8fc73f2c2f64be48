package hooks

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// handleAfterTool runs the PostToolUse hooks of a call whose result the
// agent puts to the tool plumbing (ipc.AgentAfterToolTopic, from the agent
// loop only) and answers with what they say for the model, as Claude Code
// gives it: a hook's additionalContext, and the reason of one that blocks
// (decision "block", or exit 2 with stderr), after a call that succeeded.
// The tool has run: blocking cannot undo it, the model is told. It always answers, so the agent
// never waits out its deadline for a call no hook matches.
func handleAfterTool(c *sdk.Call) error {
	var req ipc.AgentAfterTool
	if err := json.Unmarshal(c.Payload(), &req); err != nil || req.CallID == "" {
		return nil
	}
	if agents, err := c.Interceptors(ipc.UserPromptTopic); err != nil || !contains(agents, c.SourceID()) || c.SourceID() == c.CapsuleID() {
		return nil
	}
	args := req.Arguments
	key := callPrefix + req.CallID
	if raw, ok, err := c.KVGet(key); err == nil && ok {
		// The arguments the tool ran with: a PreToolUse hook may have
		// changed the model's.
		var rec callRecord
		if json.Unmarshal(raw, &rec) == nil && len(rec.Arguments) > 0 {
			args = rec.Arguments
		}
		// A call id is used once: a record left behind is never read again.
		_ = c.KVDelete(key)
	}
	var feedback []string
	// As in Claude Code, PostToolUse follows a call that succeeded: a failed
	// or refused one runs none (scripts read what the tool wrote).
	if hooks, cfg := hooksFor(c, PostToolUse, req.Name); len(hooks) > 0 && !req.IsError {
		resp, err := json.Marshal(map[string]any{"is_error": req.IsError, "content": req.Content, "duration_ms": req.DurationMS})
		if err != nil {
			return fmt.Errorf("hooks: PostToolUse input: %w", err)
		}
		for _, h := range hooks {
			v, _ := run(c, h, cfg, Input{HookEventName: PostToolUse, SessionID: req.SessionID, ToolName: req.Name, ToolInput: args, ToolResponse: resp})
			logVerdict(c, h, PostToolUse, v)
			if v.Block {
				feedback = append(feedback, "PostToolUse hook feedback: "+v.Reason)
			}
			if v.Context != "" {
				feedback = append(feedback, "PostToolUse hook context: "+v.Context)
			}
		}
	}
	out, err := json.Marshal(ipc.AgentAfterToolAnswer{CallID: req.CallID, Context: strings.Join(feedback, "\n\n")})
	if err != nil {
		return fmt.Errorf("hooks: the answer about call %q: %w", req.CallID, err)
	}
	if len(feedback) > 0 {
		c.Log(hostapi.LogInfo, fmt.Sprintf("hooks: PostToolUse of call %q of %s: %d answer(s) given to the model", req.CallID, req.Name, len(feedback)))
	}
	return c.PublishReply(ipc.AgentAfterToolReplyTopic, req.CallID, out)
}
