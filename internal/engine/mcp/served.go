package mcp

import (
	"context"
	"fmt"

	"github.com/yosida95/uritemplate/v3"

	"github.com/astrid-go/astrid/ipc"
)

// A server's resources, resource templates and prompts go on the
// resource and prompt conventions (ipc/resource.go, ipc/prompt.go), so
// that `astrid mcp serve` and any other user of them sees them: listed
// from the load-time server at load, as its tools are, and answered by the
// describer engine of the capsule for all its MCP servers (served_bus.go).
// A resource keeps its URI (the server's contents name it); a prompt is
// "<server id>:<name>", as a tool is, so two servers of a capsule never
// claim one name. A URI in the reserved astrid: scheme, one the
// convention's checks refuse, or a name that is not a valid tool name is
// left out, logged. A server bound to a session (bound.go) offers none:
// they would be the editor's, listed to everyone.

// maxServed bounds the resources, templates or prompts one server puts
// on the conventions: every describe answer carries them all, and it must
// fit one bus message (ipc.MaxConventionAnswer).
const maxServed = 256

// maxServedText bounds a served description, in runes.
const maxServedText = 1024

// served is what a server offers besides tools, as listed at load.
type served struct {
	resources []ipc.ResourceDescriptor
	templates []servedTemplate
	prompts   []servedPrompt
	// offersResources, offersPrompts and completes are the server's
	// capabilities: the engine binds the conventions' topics for them.
	offersResources, offersPrompts, completes bool
}

// servedTemplate is a resource template and its parsed form.
type servedTemplate struct {
	d ipc.ResourceTemplateDescriptor
	t *uritemplate.Template
}

// servedPrompt is a prompt as the bus names it and as its server does.
type servedPrompt struct {
	mcpName string
	d       ipc.PromptDescriptor
}

// listServed asks s for its resources, templates and prompts, when its
// capabilities say it has them, keeping those the conventions accept. A
// list that fails is logged and left empty: the tools still work.
func (e *Engine) listServed(ctx context.Context, s *server) served {
	var out served
	if e.opts.Bound != nil || s.session == nil || s.session.InitializeResult() == nil || s.session.InitializeResult().Capabilities == nil {
		return out
	}
	caps := s.session.InitializeResult().Capabilities
	ctx, cancel := context.WithTimeout(ctx, e.opts.StartTimeout)
	defer cancel()
	out.completes = caps.Completions != nil
	if caps.Resources != nil {
		out.offersResources = true
		if err := e.listResources(ctx, s, &out); err != nil {
			e.log.Warn("mcp server's resources not listed; none are served", "err", err)
			out.resources, out.templates = nil, nil
		}
	}
	if caps.Prompts != nil {
		out.offersPrompts = true
		if err := e.listPrompts(ctx, s, &out); err != nil {
			e.log.Warn("mcp server's prompts not listed; none are served", "err", err)
			out.prompts = nil
		}
	}
	return out
}

func (e *Engine) listResources(ctx context.Context, s *server, out *served) error {
	seen := map[string]bool{}
	for r, err := range s.session.Resources(ctx, nil) {
		if err != nil {
			return fmt.Errorf("resources/list: %w", err)
		}
		if err := ipc.CheckOwnResourceURI(r.URI); err != nil || r.Name == "" || seen[r.URI] {
			e.log.Warn("mcp resource not served", "uri", clipRunes(r.URI, 200), "err", err, "named", r.Name != "", "twice", seen[r.URI])
			continue
		}
		if len(out.resources) == maxServed {
			e.log.Warn("mcp resources past the most served left out", "max", maxServed)
			break
		}
		seen[r.URI] = true
		out.resources = append(out.resources, ipc.ResourceDescriptor{
			URI: r.URI, Name: r.Name, Title: r.Title, Description: clipRunes(r.Description, maxServedText), MimeType: r.MIMEType, Size: r.Size,
		})
	}
	for rt, err := range s.session.ResourceTemplates(ctx, nil) {
		if err != nil {
			return fmt.Errorf("resources/templates/list: %w", err)
		}
		err := ipc.CheckResourceTemplate(rt.URITemplate)
		var t *uritemplate.Template
		if err == nil {
			t, err = uritemplate.New(rt.URITemplate)
		}
		if err != nil || rt.Name == "" || seen[rt.URITemplate] {
			e.log.Warn("mcp resource template not served", "template", clipRunes(rt.URITemplate, 200), "err", err, "named", rt.Name != "")
			continue
		}
		if len(out.templates) == maxServed {
			e.log.Warn("mcp resource templates past the most served left out", "max", maxServed)
			break
		}
		seen[rt.URITemplate] = true
		d := ipc.ResourceTemplateDescriptor{
			URITemplate: rt.URITemplate, Name: rt.Name, Title: rt.Title, Description: clipRunes(rt.Description, maxServedText), MimeType: rt.MIMEType,
		}
		if out.completes {
			d.Complete = t.Varnames()
		}
		out.templates = append(out.templates, servedTemplate{d: d, t: t})
	}
	return nil
}

func (e *Engine) listPrompts(ctx context.Context, s *server, out *served) error {
	seen := map[string]bool{}
	for p, err := range s.session.Prompts(ctx, nil) {
		if err != nil {
			return fmt.Errorf("prompts/list: %w", err)
		}
		name := e.srv.ID + ":" + p.Name
		err := ipc.ValidateToolName(name)
		if err == nil && len(name) > maxMCPToolName {
			err = fmt.Errorf("%d bytes, more than MCP allows (%d)", len(name), maxMCPToolName)
		}
		if err != nil || seen[name] {
			e.log.Warn("mcp prompt not served", "prompt", clipRunes(p.Name, 60), "err", err, "twice", seen[name])
			continue
		}
		if len(out.prompts) == maxServed {
			e.log.Warn("mcp prompts past the most served left out", "max", maxServed)
			break
		}
		seen[name] = true
		d := ipc.PromptDescriptor{Name: name, Title: p.Title, Description: clipRunes(p.Description, maxServedText)}
		for _, a := range p.Arguments {
			if a == nil || a.Name == "" {
				continue
			}
			d.Arguments = append(d.Arguments, ipc.PromptArgument{
				Name: a.Name, Title: a.Title, Description: clipRunes(a.Description, maxServedText), Required: a.Required, Complete: out.completes,
			})
		}
		out.prompts = append(out.prompts, servedPrompt{mcpName: p.Name, d: d})
	}
	return nil
}

// Served returns the resources, resource templates and prompts the engine
// put on the conventions.
func (e *Engine) Served() (resources []ipc.ResourceDescriptor, templates []ipc.ResourceTemplateDescriptor, prompts []ipc.PromptDescriptor) {
	e.mu.Lock()
	defer e.mu.Unlock()
	resources = append(resources, e.served.resources...)
	for _, t := range e.served.templates {
		templates = append(templates, t.d)
	}
	for _, p := range e.served.prompts {
		prompts = append(prompts, p.d)
	}
	return resources, templates, prompts
}

// ownsURI says whether uri is one of e's resources or matches one of its
// templates.
func (e *Engine) ownsURI(uri string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range e.served.resources {
		if r.URI == uri {
			return true
		}
	}
	for _, t := range e.served.templates {
		if t.t.Regexp().MatchString(uri) {
			return true
		}
	}
	return false
}

// prompt finds one of e's prompts by its bus name.
func (e *Engine) prompt(name string) (servedPrompt, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, p := range e.served.prompts {
		if p.d.Name == name {
			return p, true
		}
	}
	return servedPrompt{}, false
}

// template finds one of e's templates by its URI template.
func (e *Engine) template(raw string) (servedTemplate, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, t := range e.served.templates {
		if t.d.URITemplate == raw {
			return t, true
		}
	}
	return servedTemplate{}, false
}
