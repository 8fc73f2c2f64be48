package anthropic

import (
	"encoding/json"
	"fmt"

	sdkapi "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/astrid-go/astrid/ipc"
)

// messageParams maps the request's conversation onto the Messages API
// (spec §6.4): text turns as user/assistant text blocks (system and tool
// text collapse to user, as upstream did), an assistant's tool calls as
// tool_use blocks, tool results as tool_result blocks (is_error kept),
// images as base64 image blocks. Consecutive messages of one role become
// one message, so every tool result of a round lands in one user message,
// as the API requires, and an assistant's text and its calls in one
// assistant message. Empty text is dropped (the API refuses empty blocks).
func messageParams(msgs []ipc.Message) ([]sdkapi.MessageParam, error) {
	var out []sdkapi.MessageParam
	for i, m := range msgs {
		assistant, blocks, err := blocksOf(m)
		if err != nil {
			return nil, fmt.Errorf("message %d (%s): %w", i, m.Role, err)
		}
		if len(blocks) == 0 {
			continue
		}
		if n := len(out); n > 0 {
			if last := out[n-1]; assistant && last.OfAssistant != nil {
				last.OfAssistant.Content = append(last.OfAssistant.Content, blocks...)
				continue
			} else if !assistant && last.OfUser != nil {
				last.OfUser.Content = append(last.OfUser.Content, blocks...)
				continue
			}
		}
		if assistant {
			out = append(out, sdkapi.NewAssistantMessage(blocks...))
		} else {
			out = append(out, sdkapi.NewUserMessage(blocks...))
		}
	}
	return out, nil
}

// blocksOf is m's content blocks and whether they are the assistant's.
func blocksOf(m ipc.Message) (assistant bool, blocks []sdkapi.ContentBlockParamUnion, err error) {
	role := m.Role == ipc.RoleAssistant
	c := m.Content
	switch c.Kind {
	case ipc.ContentText:
		if c.Text == "" {
			return role, nil, nil
		}
		return role, []sdkapi.ContentBlockParamUnion{sdkapi.NewTextBlock(c.Text)}, nil
	case ipc.ContentToolCalls:
		blocks := make([]sdkapi.ContentBlockParamUnion, 0, len(c.ToolCalls))
		for _, tc := range c.ToolCalls {
			blocks = append(blocks, sdkapi.NewToolUseBlock(tc.ID, toolInput(tc.Arguments), tc.Name))
		}
		return true, blocks, nil
	case ipc.ContentToolResult:
		r := c.ToolResult
		return false, []sdkapi.ContentBlockParamUnion{sdkapi.NewToolResultBlock(r.CallID, r.Content, r.IsError)}, nil
	case ipc.ContentMultiPart:
		blocks := make([]sdkapi.ContentBlockParamUnion, 0, len(c.Parts))
		for _, p := range c.Parts {
			switch p.Type {
			case ipc.PartText:
				if p.Text != "" {
					blocks = append(blocks, sdkapi.NewTextBlock(p.Text))
				}
			case ipc.PartImage:
				blocks = append(blocks, sdkapi.NewImageBlockBase64(p.MediaType, p.Data))
			default:
				return role, nil, fmt.Errorf("content part of type %q", p.Type)
			}
		}
		return role, blocks, nil
	}
	return role, nil, fmt.Errorf("content of unknown kind %d", c.Kind)
}

// toolInput is a call's arguments as tool_use input: the API wants an
// object, so arguments that are not one (a model once wrote invalid JSON,
// which react answered as an error) are sent as {}.
func toolInput(args json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if len(args) == 0 || json.Unmarshal(args, &obj) != nil || obj == nil {
		return json.RawMessage(`{}`)
	}
	return args
}

// toolParams maps tool definitions; an input_schema's properties and
// required go to their fields and every other keyword along with them.
func toolParams(defs []ipc.LLMToolDefinition) ([]sdkapi.ToolUnionParam, error) {
	out := make([]sdkapi.ToolUnionParam, 0, len(defs))
	for _, d := range defs {
		var schema map[string]any
		if len(d.InputSchema) > 0 {
			if err := json.Unmarshal(d.InputSchema, &schema); err != nil {
				return nil, fmt.Errorf("tool %q: input_schema: %w", d.Name, err)
			}
		}
		in := sdkapi.ToolInputSchemaParam{ExtraFields: map[string]any{}}
		for k, v := range schema {
			switch k {
			case "type":
				// Always "object" for a tool; the SDK writes it.
			case "properties":
				in.Properties = v
			case "required":
				req, _ := v.([]any)
				for _, r := range req {
					if s, ok := r.(string); ok {
						in.Required = append(in.Required, s)
					}
				}
			default:
				in.ExtraFields[k] = v
			}
		}
		tool := sdkapi.ToolParam{Name: d.Name, InputSchema: in}
		if d.Description != nil {
			tool.Description = sdkapi.String(*d.Description)
		}
		out = append(out, sdkapi.ToolUnionParam{OfTool: &tool})
	}
	return out, nil
}

// newParams is the whole request body.
func newParams(req ipc.LLMRequest, s settings) (sdkapi.MessageNewParams, error) {
	msgs, err := messageParams(req.Messages)
	if err != nil {
		return sdkapi.MessageNewParams{}, err
	}
	tools, err := toolParams(req.Tools)
	if err != nil {
		return sdkapi.MessageNewParams{}, err
	}
	model := req.Model
	if model == "" {
		model = s.model
	}
	p := sdkapi.MessageNewParams{Model: model, MaxTokens: s.maxOutputTokens, Messages: msgs, Tools: tools}
	if req.System != "" {
		p.System = []sdkapi.TextBlockParam{{Text: req.System}}
	}
	return p, nil
}
