package promptbuilder

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// DefaultSystemPrompt is the base prompt when neither the request nor the
// operator's [env] system_prompt gives one.
const DefaultSystemPrompt = `You are Astrid, an AI agent running on the user's machine. ` +
	`You answer the user's questions and carry out their requests, using the tools you are offered ` +
	`(they act on the user's workspace and the world, through capsules the operator installed). ` +
	`Call a tool when you need to read or change something rather than guessing; ` +
	`tools that change things may ask the user for approval first. Be concise, and say plainly what you did.`

// Hook wait bounds, in milliseconds ([env] hook_timeout_ms).
const (
	defaultHookTimeoutMs = 500
	maxHookTimeoutMs     = 5000
)

func handleAssemble(c *sdk.Call) error {
	req, derr := decodeRequest(c.Payload())
	registerFailureReply(c, req)
	if derr != nil {
		return answerError(c, req, derr.Error())
	}
	if err := req.validate(); err != nil {
		return answerError(c, req, "invalid request: "+err.Error())
	}
	resp, tools, err := assemble(c, req)
	if err != nil {
		return answerError(c, req, err.Error())
	}
	body, err := encodeResponse(resp, tools)
	if err == nil {
		err = c.Publish(ResponseTopic, body)
	}
	if err != nil {
		// Most likely over the bus's message cap: answer so the turn ends.
		return answerError(c, req, "the assembled prompt could not be sent: "+err.Error())
	}
	notice := AfterBuild{RequestID: req.RequestID, SessionID: req.SessionID, SystemPrompt: resp.SystemPrompt, UserContextPrefix: resp.UserContextPrefix}
	if err := c.PublishJSON(AfterBuildTopic, notice); err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("prompt builder: after_build of %q not published: %v", req.RequestID, err))
	}
	return nil
}

// assemble builds the answer to a valid request: the response without its
// tools, and the tools encoded.
func assemble(c *sdk.Call, req Request) (Response, json.RawMessage, error) {
	messages := req.Messages
	if len(messages) == 0 && req.SessionID != "" {
		h, err := history(c, req.RequestID, req.SessionID)
		if err != nil {
			return Response{}, nil, err
		}
		messages = h
	}
	if messages == nil {
		messages = []ipc.Message{}
	}
	base := baseSystemPrompt(c, req)
	hooks, err := runHooks(c, HookRequest{RequestID: req.RequestID, SessionID: req.SessionID, Messages: messages,
		SystemPrompt: base, Model: req.Model, Provider: req.Provider}, hookTimeout(c))
	if err != nil {
		return Response{}, nil, err
	}
	statics, err := staticContexts(c, req.RequestID)
	if err != nil {
		return Response{}, nil, err
	}
	defs, err := tools(c)
	if err != nil {
		return Response{}, nil, err
	}
	system, prefix := merge(c, base, workspaceContext(c), statics, hooks)
	return Response{RequestID: req.RequestID, SessionID: req.SessionID, SystemPrompt: system,
		UserContextPrefix: prefix, Messages: messages}, defs, nil
}

// toolsNull is how Response encodes without tools; encodeResponse puts
// the encoded catalogue in its place. A string cannot hold it (its quotes
// would be escaped), so its first occurrence is the field.
var toolsNull = []byte(`,"tools":null,"messages":`)

// encodeResponse is resp with tools as its catalogue, spliced in as
// encoded rather than decoded and encoded again on every turn.
func encodeResponse(resp Response, tools json.RawMessage) ([]byte, error) {
	resp.Tools = nil
	b, err := json.Marshal(resp)
	if err != nil {
		return nil, fmt.Errorf("encode the response: %w", err)
	}
	i := bytes.Index(b, toolsNull)
	if i < 0 {
		return nil, fmt.Errorf("encode the response: no tools field in %.80q", b)
	}
	out := make([]byte, 0, len(b)+len(tools))
	out = append(out, b[:i]...)
	out = append(out, `,"tools":`...)
	out = append(out, tools...)
	out = append(out, b[i+len(`,"tools":null`):]...)
	return out, nil
}

// baseSystemPrompt is the request's system prompt, else the operator's,
// else DefaultSystemPrompt.
func baseSystemPrompt(c *sdk.Call, req Request) string {
	if s := strings.TrimSpace(req.SystemPrompt); s != "" {
		return s
	}
	if s, ok := c.Config("system_prompt"); ok && strings.TrimSpace(s) != "" {
		return strings.TrimSpace(s)
	}
	return DefaultSystemPrompt
}

// hookTimeout reads [env] hook_timeout_ms per request (the operator may
// change it); a value that is not a positive number is logged and the
// default used.
func hookTimeout(c *sdk.Call) time.Duration {
	ms := defaultHookTimeoutMs
	if s, ok := c.Config("hook_timeout_ms"); ok && s != "" {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		switch {
		case err != nil || n <= 0:
			c.Log(hostapi.LogWarn, fmt.Sprintf("prompt builder: hook_timeout_ms %q is not a positive number of milliseconds; using %d", s, defaultHookTimeoutMs))
		case n > maxHookTimeoutMs:
			ms = maxHookTimeoutMs
		default:
			ms = n
		}
	}
	return time.Duration(ms) * time.Millisecond
}

// merge composes the system prompt and the user context prefix (spec
// §4.2 step 4, OpenClaw's order): the prefix is every prependContext (and
// the static context of capsules without allow_prompt_injection) joined
// by "\n"; the last systemPrompt replaces the base; the system prompt is
// every prependSystemContext, the base, the workspace's instructions, the
// static context of capsules holding the grant, then every
// appendSystemContext, joined by "\n". hooks are already gated.
func merge(c *sdk.Call, base, workspace string, statics []staticContext, hooks []contribution) (system, prefix string) {
	var prepend, appendix, prefixes []string
	for _, h := range hooks {
		if h.SystemPrompt != "" {
			base = h.SystemPrompt
		}
		prepend = appendNonEmpty(prepend, h.PrependSystemContext)
		appendix = appendNonEmpty(appendix, h.AppendSystemContext)
		prefixes = appendNonEmpty(prefixes, h.PrependContext)
	}
	parts := append(prepend, base, workspace)
	for _, s := range statics {
		held, err := c.HoldsGrant(s.capsule, hostapi.GrantPromptInjection)
		if err != nil {
			c.Log(hostapi.LogWarn, fmt.Sprintf("prompt builder: cannot tell whether %s holds %s (treated as not): %v", s.capsule, hostapi.GrantPromptInjection, err))
		}
		if held {
			parts = append(parts, s.text)
		} else {
			prefixes = append(prefixes, s.text)
		}
	}
	parts = append(parts, appendix...)
	var kept []string
	for _, p := range parts {
		kept = appendNonEmpty(kept, p)
	}
	return strings.Join(kept, "\n"), strings.Join(prefixes, "\n")
}

func appendNonEmpty(s []string, v string) []string {
	if v == "" {
		return s
	}
	return append(s, v)
}
