package mcpserve

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/ipc"
)

// promptEntry is a served prompt and the capsule that owns it.
type promptEntry struct {
	capsule string
	// command marks a [[command]]'s prompt (static.go).
	command bool
	d       ipc.PromptDescriptor
}

// maxPromptArguments bounds the arguments of one prompts/get, in bytes.
const maxPromptArguments = 64 << 10

// syncPrompts runs the prompt describe fan-out and makes the served
// prompts what it answered; a name is served from the first capsule, in
// dispatch order, that describes it.
func (s *Server) syncPrompts(ctx context.Context) error {
	answers, order, missing, err := s.describe(ctx, ipc.PromptRequestDescribeTopic, ipc.PromptDescribeResponseTopic)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		s.log.Warn("mcp serve: capsules did not describe their prompts in time", "capsules", missing, "window", s.opts.Window)
	}
	want := map[string]promptEntry{}
	for _, id := range order {
		var a ipc.PromptDescribeResponse
		for _, raw := range answers[id] {
			var one ipc.PromptDescribeResponse
			if err := json.Unmarshal(raw, &one); err != nil {
				s.log.Warn("mcp serve: malformed prompt describe answer", "capsule", id, "err", err)
				continue
			}
			a.Prompts = append(a.Prompts, one.Prompts...)
		}
		for _, p := range a.Prompts {
			if p.Name == "" || len(p.Name) > maxMCPToolName {
				s.log.Warn("mcp serve: prompt not served: its name is empty or longer than MCP allows", "capsule", id, "prompt", clip(p.Name))
				continue
			}
			if _, taken := want[p.Name]; !taken {
				want[p.Name] = promptEntry{capsule: id, d: p}
			}
		}
	}
	cmds, err := s.commandPrompts(ctx)
	if err != nil {
		s.log.Warn("mcp serve: the capsules' commands not listed as prompts", "err", err)
		// The commands served already stay.
		s.mu.Lock()
		for name, e := range s.prompts {
			if _, taken := want[name]; !taken && e.command {
				want[name] = e
			}
		}
		s.mu.Unlock()
	}
	for _, e := range cmds {
		if _, taken := want[e.d.Name]; !taken {
			want[e.d.Name] = e
		}
	}
	s.mu.Lock()
	// A capsule that did not answer in time keeps what it described last.
	for name, e := range s.prompts {
		if _, taken := want[name]; !taken && slices.Contains(missing, e.capsule) {
			want[name] = e
		}
	}
	var gone []string
	var added []promptEntry
	for name := range s.prompts {
		if _, ok := want[name]; !ok {
			gone = append(gone, name)
			delete(s.prompts, name)
		}
	}
	for name, e := range want {
		if old, ok := s.prompts[name]; !ok || old.capsule != e.capsule || old.command != e.command || !reflect.DeepEqual(old.d, e.d) {
			added = append(added, e)
			s.prompts[name] = e
		}
	}
	s.mu.Unlock()
	if len(gone) > 0 {
		s.srv.RemovePrompts(gone...)
	}
	for _, e := range added {
		p := &mcp.Prompt{Name: e.d.Name, Title: e.d.Title, Description: e.d.Description}
		for _, a := range e.d.Arguments {
			p.Arguments = append(p.Arguments, &mcp.PromptArgument{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required})
		}
		h := s.prompter(e.capsule, e.d)
		if e.command {
			h = s.commandPrompter(e.capsule, e.d)
		}
		s.srv.AddPrompt(p, h)
	}
	return nil
}

// prompter fills in a prompt of capsule's: the arguments checked against
// its description (required ones present, no unknown ones, bounded), then
// the capsule asked.
func (s *Server) prompter(capsule string, d ipc.PromptDescriptor) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		args := req.Params.Arguments
		if err := checkPromptArguments(d, args); err != nil {
			return nil, err
		}
		var res ipc.PromptGetResult
		if err := s.ask(ctx, capsule, ipc.PromptGetTopic(capsule), ipc.PromptGetResultTopic, ipc.PromptGetRequest{Name: d.Name, Arguments: args}, &res); err != nil {
			return nil, internalError("prompt %s: %v", d.Name, err)
		}
		switch {
		case res.NotFound:
			return nil, invalidParams("unknown prompt %q", d.Name)
		case res.Error != "":
			return nil, invalidParams("prompt %s: capsule %s: %s", d.Name, capsule, clip(res.Error))
		}
		out := &mcp.GetPromptResult{Description: res.Description}
		for i, m := range res.Messages {
			pm, err := messageOf(m)
			if err != nil {
				return nil, internalError("prompt %s: capsule %s: message %d: %v", d.Name, capsule, i, err)
			}
			out.Messages = append(out.Messages, pm)
		}
		return out, nil
	}
}

// checkPromptArguments refuses a get whose arguments do not fit the
// prompt's description.
func checkPromptArguments(d ipc.PromptDescriptor, args map[string]string) error {
	size := 0
	declared := map[string]bool{}
	for _, a := range d.Arguments {
		declared[a.Name] = true
		if v, ok := args[a.Name]; a.Required && (!ok || v == "") {
			return invalidParams("prompt %s: argument %q is required", d.Name, a.Name)
		}
	}
	for k, v := range args {
		if !declared[k] {
			return invalidParams("prompt %s: no argument %q (it takes %s)", d.Name, clip(k), argNames(d))
		}
		size += len(k) + len(v)
	}
	if size > maxPromptArguments {
		return invalidParams("prompt %s: the arguments are %d bytes; the most a get may carry is %d", d.Name, size, maxPromptArguments)
	}
	return nil
}

func argNames(d ipc.PromptDescriptor) string {
	if len(d.Arguments) == 0 {
		return "none"
	}
	s := ""
	for i, a := range d.Arguments {
		if i > 0 {
			s += ", "
		}
		s += a.Name
	}
	return s
}

// messageOf is a capsule's prompt message as MCP carries it.
func messageOf(m ipc.PromptMessage) (*mcp.PromptMessage, error) {
	var role mcp.Role
	switch m.Role {
	case "user", "assistant":
		role = mcp.Role(m.Role)
	default:
		return nil, fmt.Errorf("role %q is neither user nor assistant", clip(m.Role))
	}
	c := m.Content
	var content mcp.Content
	switch c.Type {
	case ipc.PromptContentText:
		content = &mcp.TextContent{Text: c.Text}
	case ipc.PromptContentImage:
		content = &mcp.ImageContent{Data: c.Data, MIMEType: c.MimeType}
	case ipc.PromptContentAudio:
		content = &mcp.AudioContent{Data: c.Data, MIMEType: c.MimeType}
	case ipc.PromptContentResource:
		if c.Resource == nil || checkURI(c.Resource.URI) != nil {
			return nil, fmt.Errorf("an embedded resource without a valid URI")
		}
		content = &mcp.EmbeddedResource{Resource: contentsOf(*c.Resource, c.Resource.URI)}
	default:
		return nil, fmt.Errorf("content type %q is none of text, image, audio, resource", clip(c.Type))
	}
	if (c.Type == ipc.PromptContentImage || c.Type == ipc.PromptContentAudio) && (len(c.Data) == 0 || c.MimeType == "") {
		return nil, fmt.Errorf("%s content without data or a MIME type", c.Type)
	}
	return &mcp.PromptMessage{Role: role, Content: content}, nil
}
