package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/astrid-go/astrid/ipc"
)

// chatParams maps a bus request to a Chat Completions request (spec §6.2):
// the system prompt first as a system message (system messages of the
// history are dropped: the prompt builder's system is the one that
// counts); text as is; an assistant's tool calls as one assistant message
// with all of them; each tool result as a tool message with its call id;
// multipart as content parts, images as data URLs. The request's model
// wins over the configured one.
func chatParams(req ipc.LLMRequest, s settings) (oai.ChatCompletionNewParams, error) {
	p := oai.ChatCompletionNewParams{
		Model:         req.Model,
		StreamOptions: oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)},
	}
	if p.Model == "" {
		p.Model = s.model
	}
	if p.Model == "" {
		return p, fmt.Errorf("no model to ask %s for: the request names none and [env] model is empty (printf %%s llama3.2 | astrid capsule env set %s model, or astrid -p --model …)", s.host(), CapsuleID)
	}
	if s.maxOutputTokens > 0 {
		// OpenAI's newer models refuse max_tokens; most other servers know
		// only max_tokens (docs/rationale/providers.md).
		if s.custom {
			p.MaxTokens = oai.Int(s.maxOutputTokens)
		} else {
			p.MaxCompletionTokens = oai.Int(s.maxOutputTokens)
		}
	}
	if s.hasTemperature {
		p.Temperature = oai.Float(s.temperature)
	}
	if req.System != "" {
		p.Messages = append(p.Messages, oai.SystemMessage(req.System))
	}
	for i, m := range req.Messages {
		msg, keep, err := chatMessage(m)
		if err != nil {
			return p, fmt.Errorf("message %d (%s): %w", i, m.Role, err)
		}
		if keep {
			p.Messages = append(p.Messages, msg)
		}
	}
	for _, t := range req.Tools {
		tool, err := chatTool(t)
		if err != nil {
			return p, err
		}
		p.Tools = append(p.Tools, tool)
	}
	return p, nil
}

// chatMessage maps one message; keep is false for one that is dropped.
func chatMessage(m ipc.Message) (msg oai.ChatCompletionMessageParamUnion, keep bool, err error) {
	c := m.Content
	switch c.Kind {
	case ipc.ContentToolCalls:
		asst := oai.ChatCompletionAssistantMessageParam{}
		for _, call := range c.ToolCalls {
			args := string(call.Arguments)
			if args == "" {
				args = "{}"
			}
			asst.ToolCalls = append(asst.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
					ID:       call.ID,
					Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: call.Name, Arguments: args},
				},
			})
		}
		return oai.ChatCompletionMessageParamUnion{OfAssistant: &asst}, true, nil
	case ipc.ContentToolResult:
		// Chat Completions has no error flag on a tool message; the model
		// is told in the text instead of losing it (spec §6.2 loses it).
		text := c.ToolResult.Content
		if c.ToolResult.IsError {
			text = "Error: " + text
		}
		return oai.ToolMessage(text, c.ToolResult.CallID), true, nil
	case ipc.ContentMultiPart:
		return multipart(m.Role, c.Parts)
	case ipc.ContentText:
		switch m.Role {
		case ipc.RoleSystem:
			return msg, false, nil
		case ipc.RoleAssistant:
			return oai.AssistantMessage(c.Text), true, nil
		default:
			// A tool message with plain text has no call id to answer;
			// it is the user's words as far as the model can tell.
			return oai.UserMessage(c.Text), true, nil
		}
	}
	return msg, false, fmt.Errorf("unknown content kind %d", c.Kind)
}

// multipart maps content parts: a user message may carry images; the
// other roles carry the text parts only.
func multipart(role ipc.Role, parts []ipc.ContentPart) (oai.ChatCompletionMessageParamUnion, bool, error) {
	var user []oai.ChatCompletionContentPartUnionParam
	var text string
	for _, part := range parts {
		switch part.Type {
		case ipc.PartText:
			user = append(user, oai.TextContentPart(part.Text))
			text += part.Text
		case ipc.PartImage:
			if role != ipc.RoleUser {
				return oai.ChatCompletionMessageParamUnion{}, false, fmt.Errorf("an image in a %s message (only user messages may carry images)", role)
			}
			user = append(user, oai.ImageContentPart(oai.ChatCompletionContentPartImageImageURLParam{
				URL: "data:" + part.MediaType + ";base64," + part.Data,
			}))
		default:
			return oai.ChatCompletionMessageParamUnion{}, false, fmt.Errorf("unknown content part type %q", part.Type)
		}
	}
	switch role {
	case ipc.RoleSystem:
		return oai.ChatCompletionMessageParamUnion{}, false, nil
	case ipc.RoleAssistant:
		return oai.AssistantMessage(text), true, nil
	default:
		return oai.UserMessage(user), true, nil
	}
}

// chatTool maps a tool definition to a function tool (not strict: the
// schemas tools give are not all strict-compatible, spec §6.3 defect c).
func chatTool(t ipc.LLMToolDefinition) (oai.ChatCompletionToolUnionParam, error) {
	schema := bytes.TrimSpace(t.InputSchema)
	if len(schema) == 0 {
		schema = []byte(`{"type":"object"}`)
	}
	if schema[0] != '{' || !json.Valid(schema) {
		return oai.ChatCompletionToolUnionParam{}, fmt.Errorf("tool %s: input_schema is not a JSON object", t.Name)
	}
	// The function definition goes to the SDK as JSON written here, the
	// schema's bytes as they came: decoding every tool's schema into a map
	// for the SDK to encode again was ≈ 5 % of a daemon's CPU per turn
	// (docs/rationale/providers.md, "Why does the OpenAI provider hand the
	// SDK its tools' schemas as raw JSON?").
	name, err := json.Marshal(t.Name)
	if err != nil {
		return oai.ChatCompletionToolUnionParam{}, fmt.Errorf("tool %s: %w", t.Name, err)
	}
	b := make([]byte, 0, len(schema)+len(name)+64)
	b = append(b, `{"name":`...)
	b = append(b, name...)
	if t.Description != nil {
		desc, err := json.Marshal(*t.Description)
		if err != nil {
			return oai.ChatCompletionToolUnionParam{}, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		b = append(b, `,"description":`...)
		b = append(b, desc...)
	}
	b = append(b, `,"parameters":`...)
	b = append(b, schema...)
	b = append(b, '}')
	var fn shared.FunctionDefinitionParam
	param.SetJSON(b, &fn)
	return oai.ChatCompletionFunctionTool(fn), nil
}

// redactedURL is u without credentials, for messages.
func redactedURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return p.Redacted()
}
