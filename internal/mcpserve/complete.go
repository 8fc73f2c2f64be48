package mcpserve

import (
	"context"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/ipc"
)

// maxCompletions is the most values one completion answers (MCP's limit).
const maxCompletions = 100

// maxCompletionValue bounds one completion value a capsule answers, in
// bytes; longer ones are dropped.
const maxCompletionValue = 1024

// complete answers completion/complete for a prompt argument or a
// template variable: from the values the owning capsule's description
// declares (those that begin with what the client typed, case-folded, in
// the declared order), or, for one the description marks Complete, from
// the capsule itself.
func (s *Server) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	ask := ipc.CompletionRequest{Argument: p.Argument.Name, Value: p.Argument.Value}
	if p.Context != nil {
		ask.Context = p.Context.Arguments
	}
	var values []string
	var owner string
	s.mu.Lock()
	switch p.Ref.Type {
	case "ref/prompt":
		e, ok := s.prompts[p.Ref.Name]
		if !ok {
			s.mu.Unlock()
			return nil, invalidParams("unknown prompt %q", clip(p.Ref.Name))
		}
		i := slices.IndexFunc(e.d.Arguments, func(a ipc.PromptArgument) bool { return a.Name == p.Argument.Name })
		if i < 0 {
			s.mu.Unlock()
			return nil, invalidParams("prompt %s has no argument %q", e.d.Name, clip(p.Argument.Name))
		}
		values, ask.Prompt = e.d.Arguments[i].Values, e.d.Name
		if e.d.Arguments[i].Complete && !e.command {
			owner = e.capsule
		}
	case "ref/resource":
		e, ok := s.templates[p.Ref.URI]
		if !ok {
			s.mu.Unlock()
			return nil, invalidParams("unknown resource template %q", clip(p.Ref.URI))
		}
		if !slices.Contains(e.t.Varnames(), p.Argument.Name) {
			s.mu.Unlock()
			return nil, invalidParams("resource template %s has no variable %q", clip(p.Ref.URI), clip(p.Argument.Name))
		}
		values, ask.Template = e.d.Values[p.Argument.Name], e.d.URITemplate
		if slices.Contains(e.d.Complete, p.Argument.Name) {
			owner = e.capsule
		}
	default:
		s.mu.Unlock()
		return nil, invalidParams("unknown completion reference type %q (want ref/prompt or ref/resource)", clip(p.Ref.Type))
	}
	s.mu.Unlock()
	if owner == "" || len(values) > 0 {
		return &mcp.CompleteResult{Completion: completions(values, p.Argument.Value)}, nil
	}
	return s.completeByCapsule(ctx, owner, ask)
}

// completeTimeout bounds a capsule's completion: a client asks one per
// keystroke.
const completeTimeout = 5 * time.Second

// completeByCapsule asks the owning capsule for the completions.
func (s *Server) completeByCapsule(ctx context.Context, owner string, ask ipc.CompletionRequest) (*mcp.CompleteResult, error) {
	ctx, cancel := context.WithTimeout(ctx, completeTimeout)
	defer cancel()
	var res ipc.CompletionResult
	if err := s.ask(ctx, owner, ipc.CompletionTopic(owner), ipc.CompletionResultTopic, ask, &res); err != nil {
		return nil, internalError("completion of %s: %v", clip(ask.Argument), err)
	}
	if res.Error != "" {
		return nil, internalError("completion of %s: capsule %s: %s", clip(ask.Argument), owner, clip(res.Error))
	}
	out := mcp.CompletionResultDetails{Values: []string{}}
	for _, v := range res.Values {
		if len(out.Values) == maxCompletions {
			break
		}
		if len(v) <= maxCompletionValue && utf8.ValidString(v) {
			out.Values = append(out.Values, v)
		}
	}
	out.Total = max(res.Total, len(out.Values))
	out.HasMore = out.Total > len(out.Values)
	return &mcp.CompleteResult{Completion: out}, nil
}

// completions are values that begin with typed, case-folded, at most
// maxCompletions of them.
func completions(values []string, typed string) mcp.CompletionResultDetails {
	out := mcp.CompletionResultDetails{Values: []string{}}
	typed = strings.ToLower(typed)
	for _, v := range values {
		if strings.HasPrefix(strings.ToLower(v), typed) {
			out.Total++
			if len(out.Values) < maxCompletions {
				out.Values = append(out.Values, v)
			}
		}
	}
	out.HasMore = out.Total > len(out.Values)
	return out
}
