package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

// The handlers the describer engine binds for the resource, prompt and
// completion conventions (served.go). A read, get or completion goes to
// the server that listed the resource, template or prompt, the one of the
// request's workspace and principal, as a tool call does (workspace.go).
// A capsule whose code serves a convention too intercepts the same topic,
// and both are asked at once: the engine then leaves what no server of it
// has to the code rather than answer "not found" first.
const (
	resourceDescribeHandler = "mcp_resource_describe"
	resourceReadHandler     = "mcp_resource_read"
	promptDescribeHandler   = "mcp_prompt_describe"
	promptGetHandler        = "mcp_prompt_get"
	completeHandler         = "mcp_complete"
)

// servedTimeout bounds a read or a get (mcp serve waits as long);
// completeTimeout a completion, asked as a person types.
const (
	servedTimeout   = 30 * time.Second
	completeTimeout = 5 * time.Second
)

// maxCompletions is the most values a completion answers (MCP's and the
// convention's limit).
const maxCompletions = 100

// servedSurface is the describer's part of the conventions: the
// interceptors and grants for what any loaded MCP server of the capsule
// offers.
func (e *Engine) servedSurface(s *capsule.Surface) {
	var res, prompts, completes bool
	for _, sib := range loadedSiblings(e) {
		sib.mu.Lock()
		res = res || sib.served.offersResources
		prompts = prompts || sib.served.offersPrompts
		completes = completes || sib.served.completes && (sib.served.offersResources || sib.served.offersPrompts)
		sib.mu.Unlock()
	}
	add := func(pattern, handler string, publish ...string) {
		s.Interceptors = append(s.Interceptors, manifest.Interceptor{Pattern: pattern, Handler: handler, Priority: manifest.DefaultPriority})
		s.Subscribe = append(s.Subscribe, pattern)
		s.Publish = append(s.Publish, publish...)
	}
	if res {
		add(ipc.ResourceRequestDescribeTopic, resourceDescribeHandler, ipc.ResourceDescribeResponseTopic(e.capsuleID))
		add(ipc.ResourceReadTopic(e.capsuleID), resourceReadHandler, ipc.ResourceReadResultTopic)
	}
	if prompts {
		add(ipc.PromptRequestDescribeTopic, promptDescribeHandler, ipc.PromptDescribeResponseTopic(e.capsuleID))
		add(ipc.PromptGetTopic(e.capsuleID), promptGetHandler, ipc.PromptGetResultTopic)
	}
	if completes {
		add(ipc.CompletionTopic(e.capsuleID), completeHandler, ipc.CompletionResultTopic)
	}
}

// servedHandler says whether handler is one of the conventions'.
func servedHandler(handler string) bool {
	switch handler {
	case resourceDescribeHandler, resourceReadHandler, promptDescribeHandler, promptGetHandler, completeHandler:
		return true
	}
	return false
}

// invokeServed answers one of the conventions' invocations for every MCP
// server of the capsule.
func (e *Engine) invokeServed(ctx context.Context, inv hostapi.Invocation) (hostapi.Verdict, error) {
	if describer(e) != e {
		return hostapi.Verdict{}, capsule.ErrNotSupported
	}
	call, cctx := e.host.Begin(ctx, inv.Principal)
	defer call.End()
	var err error
	switch inv.Handler {
	case resourceDescribeHandler:
		var a ipc.ResourceDescribeResponse
		for _, sib := range loadedSiblings(e) {
			r, t, _ := sib.Served()
			a.Resources = append(a.Resources, r...)
			a.Templates = append(a.Templates, t...)
		}
		if a.Resources == nil {
			a.Resources = []ipc.ResourceDescriptor{}
		}
		err = publishJSON(call, ipc.ResourceDescribeResponseTopic(e.capsuleID), a)
	case promptDescribeHandler:
		a := ipc.PromptDescribeResponse{Prompts: []ipc.PromptDescriptor{}}
		for _, sib := range loadedSiblings(e) {
			_, _, p := sib.Served()
			a.Prompts = append(a.Prompts, p...)
		}
		err = publishJSON(call, ipc.PromptDescribeResponseTopic(e.capsuleID), a)
	case resourceReadHandler:
		var req ipc.ResourceReadRequest
		res := ipc.ResourceReadResult{}
		if derr := json.Unmarshal(ipc.GuestBytes(inv.Payload), &req); derr != nil {
			res.Error = "the read request does not decode: " + derr.Error()
		} else {
			res = e.read(cctx, call, inv.Principal, req.URI)
		}
		if res.NotFound && e.codeServes[inv.Topic] {
			return hostapi.Verdict{}, nil // the capsule's code answers it
		}
		res.RequestID = req.RequestID
		err = reply(call, res)
	case promptGetHandler:
		var req ipc.PromptGetRequest
		res := ipc.PromptGetResult{}
		if derr := json.Unmarshal(ipc.GuestBytes(inv.Payload), &req); derr != nil {
			res.Error = "the get request does not decode: " + derr.Error()
		} else {
			res = e.getPrompt(cctx, call, inv.Principal, req)
		}
		if res.NotFound && e.codeServes[inv.Topic] {
			return hostapi.Verdict{}, nil // the capsule's code answers it
		}
		res.RequestID = req.RequestID
		err = reply(call, res)
	case completeHandler:
		var req ipc.CompletionRequest
		res := ipc.CompletionResult{Values: []string{}}
		if derr := json.Unmarshal(ipc.GuestBytes(inv.Payload), &req); derr != nil {
			res.Error = "the completion request does not decode: " + derr.Error()
		} else {
			res = e.complete(cctx, call, inv.Principal, req)
		}
		if res.Error == errNoOwner && e.codeServes[inv.Topic] {
			return hostapi.Verdict{}, nil // the capsule's code answers it
		}
		res.RequestID = req.RequestID
		err = reply(call, res)
	}
	if err != nil {
		return hostapi.Verdict{}, fmt.Errorf("mcp: %s for capsule %s: %w", inv.Handler, e.capsuleID, err)
	}
	return hostapi.Verdict{}, nil
}

// read reads uri from the server that lists it or whose template matches
// it.
func (e *Engine) read(ctx context.Context, call *host.Call, principal, uri string) ipc.ResourceReadResult {
	if err := ipc.CheckResourceURI(uri); err != nil {
		return ipc.ResourceReadResult{Error: err.Error()}
	}
	var owner *Engine
	for _, sib := range loadedSiblings(e) {
		if sib.ownsURI(uri) {
			owner = sib
			break
		}
	}
	if owner == nil {
		return ipc.ResourceReadResult{NotFound: true}
	}
	ctx, cancel := context.WithTimeout(ctx, servedTimeout)
	defer cancel()
	s, release, err := owner.serverFor(ctx, call, principal)
	if err != nil {
		return ipc.ResourceReadResult{Error: err.Error()}
	}
	defer release()
	r, err := s.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		var wire *jsonrpc.Error
		if errors.As(err, &wire) && wire.Code == jsonrpc.CodeInvalidParams { // a missing resource (SEP-2164)
			return ipc.ResourceReadResult{NotFound: true}
		}
		return ipc.ResourceReadResult{Error: fmt.Sprintf("MCP server %s: reading %s: %v", owner.srv.ID, clipRunes(uri, 200), err)}
	}
	out := ipc.ResourceReadResult{Contents: []ipc.ResourceContents{}}
	for _, c := range r.Contents {
		if c == nil {
			continue
		}
		rc, err := contentsOf(c, uri)
		if err != nil {
			return ipc.ResourceReadResult{Error: fmt.Sprintf("MCP server %s: reading %s: %v", owner.srv.ID, clipRunes(uri, 200), err)}
		}
		out.Contents = append(out.Contents, rc)
	}
	return out
}

// contentsOf is a server's resource contents on the convention; its URI
// (the read one's when it names none) must pass the convention's checks.
func contentsOf(c *mcp.ResourceContents, uri string) (ipc.ResourceContents, error) {
	if c.URI == "" {
		c.URI = uri
	}
	if err := ipc.CheckOwnResourceURI(c.URI); err != nil {
		return ipc.ResourceContents{}, fmt.Errorf("contents refused: %w", err)
	}
	return ipc.ResourceContents{URI: c.URI, MimeType: c.MIMEType, Text: c.Text, Blob: c.Blob}, nil
}

// getPrompt fills in a prompt on the server that lists it.
func (e *Engine) getPrompt(ctx context.Context, call *host.Call, principal string, req ipc.PromptGetRequest) ipc.PromptGetResult {
	var owner *Engine
	var p servedPrompt
	for _, sib := range loadedSiblings(e) {
		if sp, ok := sib.prompt(req.Name); ok {
			owner, p = sib, sp
			break
		}
	}
	if owner == nil {
		return ipc.PromptGetResult{NotFound: true}
	}
	ctx, cancel := context.WithTimeout(ctx, servedTimeout)
	defer cancel()
	s, release, err := owner.serverFor(ctx, call, principal)
	if err != nil {
		return ipc.PromptGetResult{Error: err.Error()}
	}
	defer release()
	r, err := s.session.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.mcpName, Arguments: req.Arguments})
	if err != nil {
		return ipc.PromptGetResult{Error: fmt.Sprintf("MCP server %s: prompt %s: %v", owner.srv.ID, p.mcpName, err)}
	}
	out := ipc.PromptGetResult{Description: clipRunes(r.Description, maxServedText), Messages: []ipc.PromptMessage{}}
	for i, m := range r.Messages {
		if m == nil {
			continue
		}
		c, err := promptContentOf(m.Content)
		if err != nil {
			return ipc.PromptGetResult{Error: fmt.Sprintf("MCP server %s: prompt %s: message %d: %v", owner.srv.ID, p.mcpName, i, err)}
		}
		out.Messages = append(out.Messages, ipc.PromptMessage{Role: string(m.Role), Content: c})
	}
	return out
}

// promptContentOf is a prompt message's content on the convention: a
// resource link, which the convention has no kind for, becomes text
// naming it.
func promptContentOf(c mcp.Content) (ipc.PromptContent, error) {
	switch c := c.(type) {
	case *mcp.TextContent:
		return ipc.PromptContent{Type: ipc.PromptContentText, Text: c.Text}, nil
	case *mcp.ImageContent:
		return ipc.PromptContent{Type: ipc.PromptContentImage, Data: c.Data, MimeType: c.MIMEType}, nil
	case *mcp.AudioContent:
		return ipc.PromptContent{Type: ipc.PromptContentAudio, Data: c.Data, MimeType: c.MIMEType}, nil
	case *mcp.EmbeddedResource:
		if c.Resource == nil {
			return ipc.PromptContent{}, errors.New("an embedded resource without contents")
		}
		rc, err := contentsOf(c.Resource, "")
		if err != nil {
			return ipc.PromptContent{}, err
		}
		return ipc.PromptContent{Type: ipc.PromptContentResource, Resource: &rc}, nil
	case *mcp.ResourceLink:
		return ipc.PromptContent{Type: ipc.PromptContentText, Text: fmt.Sprintf("[resource %s %s]", c.Name, c.URI)}, nil
	}
	return ipc.PromptContent{}, fmt.Errorf("content %T is none of text, image, audio, resource", c)
}

// complete asks the server owning the prompt or template for the values
// completing an argument or variable.
func (e *Engine) complete(ctx context.Context, call *host.Call, principal string, req ipc.CompletionRequest) ipc.CompletionResult {
	var owner *Engine
	ref := &mcp.CompleteReference{}
	for _, sib := range loadedSiblings(e) {
		if req.Prompt != "" {
			if p, ok := sib.prompt(req.Prompt); ok {
				owner, ref.Type, ref.Name = sib, "ref/prompt", p.mcpName
				break
			}
		} else if t, ok := sib.template(req.Template); ok {
			owner, ref.Type, ref.URI = sib, "ref/resource", t.d.URITemplate
			break
		}
	}
	if owner == nil {
		return ipc.CompletionResult{Values: []string{}, Error: errNoOwner}
	}
	owner.mu.Lock()
	completes := owner.served.completes
	owner.mu.Unlock()
	if !completes {
		return ipc.CompletionResult{Values: []string{}}
	}
	ctx, cancel := context.WithTimeout(ctx, completeTimeout)
	defer cancel()
	s, release, err := owner.serverFor(ctx, call, principal)
	if err != nil {
		return ipc.CompletionResult{Values: []string{}, Error: err.Error()}
	}
	defer release()
	params := &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: req.Argument, Value: req.Value}}
	if len(req.Context) > 0 {
		params.Context = &mcp.CompleteContext{Arguments: req.Context}
	}
	r, err := s.session.Complete(ctx, params)
	if err != nil {
		return ipc.CompletionResult{Values: []string{}, Error: fmt.Sprintf("MCP server %s: completion of %s: %v", owner.srv.ID, clipRunes(req.Argument, 60), err)}
	}
	values := r.Completion.Values
	if len(values) > maxCompletions {
		values = values[:maxCompletions]
	}
	return ipc.CompletionResult{Values: append([]string{}, values...), Total: max(r.Completion.Total, len(values))}
}

// errNoOwner answers a completion for a prompt or template no server of
// the capsule has.
const errNoOwner = "no MCP server of this capsule has that prompt or resource template"

// publishJSON publishes v on topic for call.
func publishJSON(call *host.Call, topic string, v any) error {
	b, err := json.Marshal(v)
	if err == nil && len(b) > ipc.MaxConventionAnswer {
		err = fmt.Errorf("the answer is %d bytes, more than the %d a convention's answer may be", len(b), ipc.MaxConventionAnswer)
	}
	if err == nil {
		err = call.Publish(topic, b)
	}
	return err
}

// reply answers the request call serves with v; an answer larger than a
// convention's answer may be is replaced by an error saying so.
func reply(call *host.Call, v any) error {
	replyTo, corr := call.Serving()
	if corr == "" {
		return errors.New("the event is no request: there is nowhere to answer")
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(b) > ipc.MaxConventionAnswer {
		var echo struct {
			RequestID string `json:"request_id,omitempty"`
		}
		_ = json.Unmarshal(b, &echo)
		b, _ = json.Marshal(map[string]string{
			"request_id": echo.RequestID,
			"error":      fmt.Sprintf("the MCP server's answer is %d bytes encoded, more than the %d a convention's answer may be", len(b), ipc.MaxConventionAnswer),
		})
	}
	return call.PublishReply(replyTo, corr, b)
}
