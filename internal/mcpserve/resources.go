package mcpserve

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/astrid-go/astrid/ipc"
)

// resourceEntry is a served resource and the capsule that owns it.
type resourceEntry struct {
	capsule string
	// kind is a declared file's (kindSkill, kindContext); "" for a
	// resource of the resource convention.
	kind string
	d    ipc.ResourceDescriptor
}

// templateEntry is a served resource template and the capsule that owns it.
type templateEntry struct {
	capsule string
	d       ipc.ResourceTemplateDescriptor
	t       *uritemplate.Template
}

// syncResources runs the resource describe fan-out and makes the served
// resources and templates what it answered; a URI (or template) is served
// from the first capsule, in dispatch order, that describes it.
func (s *Server) syncResources(ctx context.Context) error {
	answers, order, missing, err := s.describe(ctx, ipc.ResourceRequestDescribeTopic, ipc.ResourceDescribeResponseTopic)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		s.log.Warn("mcp serve: capsules did not describe their resources in time", "capsules", missing, "window", s.opts.Window)
	}
	res := map[string]resourceEntry{}
	tmpls := map[string]templateEntry{}
	for _, id := range order {
		var a ipc.ResourceDescribeResponse
		for _, raw := range answers[id] {
			var one ipc.ResourceDescribeResponse
			if err := json.Unmarshal(raw, &one); err != nil {
				s.log.Warn("mcp serve: malformed resource describe answer", "capsule", id, "err", err)
				continue
			}
			a.Resources = append(a.Resources, one.Resources...)
			a.Templates = append(a.Templates, one.Templates...)
		}
		for _, r := range a.Resources {
			if err := checkOwnURI(r.URI); err != nil || r.Name == "" {
				s.log.Warn("mcp serve: resource not served", "capsule", id, "uri", clip(r.URI), "err", err, "named", r.Name != "")
				continue
			}
			if _, taken := res[r.URI]; !taken {
				res[r.URI] = resourceEntry{capsule: id, d: r}
			}
		}
		for _, t := range a.Templates {
			tt, err := checkTemplate(t.URITemplate)
			if err != nil || t.Name == "" {
				s.log.Warn("mcp serve: resource template not served", "capsule", id, "template", clip(t.URITemplate), "err", err, "named", t.Name != "")
				continue
			}
			if _, taken := tmpls[t.URITemplate]; !taken {
				tmpls[t.URITemplate] = templateEntry{capsule: id, d: t, t: tt}
			}
		}
	}
	declared, silentFiles, err := s.staticResources(ctx)
	if err != nil {
		return err
	}
	for _, e := range declared {
		if _, taken := res[e.d.URI]; !taken {
			res[e.d.URI] = e
		}
	}
	s.mu.Lock()
	// A capsule that did not answer in time (a busy one) keeps what it
	// described last; one unloaded is asked no more, and its go.
	silent := map[string]bool{}
	for _, id := range append(missing, silentFiles...) {
		silent[id] = true
	}
	for uri, e := range s.resources {
		if _, taken := res[uri]; !taken && silent[e.capsule] {
			res[uri] = e
		}
	}
	for raw, e := range s.templates {
		if _, taken := tmpls[raw]; !taken && silent[e.capsule] {
			tmpls[raw] = e
		}
	}
	var goneR, goneT []string
	var addR []resourceEntry
	var addT []templateEntry
	var changed []string // declared files whose description changed
	for uri := range s.resources {
		if _, ok := res[uri]; !ok {
			goneR = append(goneR, uri)
			delete(s.resources, uri)
		}
	}
	for uri, e := range res {
		if old, ok := s.resources[uri]; !ok || old != e {
			if ok && e.kind != "" {
				changed = append(changed, uri)
			}
			addR = append(addR, e)
			s.resources[uri] = e
		}
	}
	for raw := range s.templates {
		if _, ok := tmpls[raw]; !ok {
			goneT = append(goneT, raw)
			delete(s.templates, raw)
		}
	}
	for raw, e := range tmpls {
		if old, ok := s.templates[raw]; !ok || old.capsule != e.capsule || !reflect.DeepEqual(old.d, e.d) {
			addT = append(addT, e)
			s.templates[raw] = e
		}
	}
	s.mu.Unlock()
	if len(goneR) > 0 {
		s.srv.RemoveResources(goneR...)
	}
	if len(goneT) > 0 {
		s.srv.RemoveResourceTemplates(goneT...)
	}
	for _, e := range addR {
		h := s.reader(e.capsule)
		if e.kind != "" {
			h = s.staticReader(e.capsule, e.kind, e.d.Name)
		}
		s.srv.AddResource(&mcp.Resource{URI: e.d.URI, Name: e.d.Name, Title: e.d.Title, Description: e.d.Description, MIMEType: e.d.MimeType, Size: e.d.Size}, h)
	}
	// A declared file says nothing when it changes; a new size after its
	// capsule reloaded is the sign (subscribed clients re-read it).
	for _, uri := range changed {
		if err := s.srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
			s.log.Debug("mcp serve: resource update not sent", "uri", uri, "err", err)
		}
	}
	for _, e := range addT {
		s.srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: e.d.URITemplate, Name: e.d.Name, Title: e.d.Title, Description: e.d.Description, MIMEType: e.d.MimeType}, s.reader(e.capsule))
	}
	return nil
}

// owner is the capsule that owns uri: the one describing it, else the one
// whose template matches it ("" for none).
func (s *Server) owner(uri string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.resources[uri]; ok {
		return e.capsule
	}
	for _, e := range s.templates {
		if e.t.Regexp().MatchString(uri) {
			return e.capsule
		}
	}
	return ""
}

// reader reads a resource of capsule's: the URI checked, then asked of
// the capsule (never read here).
func (s *Server) reader(capsule string) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		if err := checkURI(uri); err != nil {
			return nil, invalidParams("%v", err)
		}
		var res ipc.ResourceReadResult
		if err := s.ask(ctx, capsule, ipc.ResourceReadTopic(capsule), ipc.ResourceReadResultTopic, ipc.ResourceReadRequest{URI: uri}, &res); err != nil {
			return nil, internalError("resource %s: %v", clip(uri), err)
		}
		switch {
		case res.NotFound:
			return nil, mcp.ResourceNotFoundError(uri)
		case res.Error != "":
			return nil, internalError("resource %s: capsule %s: %s", clip(uri), capsule, clip(res.Error))
		case len(res.Contents) == 0:
			return nil, internalError("resource %s: capsule %s answered no contents", clip(uri), capsule)
		}
		out := &mcp.ReadResourceResult{}
		for _, c := range res.Contents {
			out.Contents = append(out.Contents, contentsOf(c, uri))
		}
		return out, nil
	}
}

// contentsOf is a capsule's resource contents as MCP carries them; a
// contents without a URI is the read one's.
func contentsOf(c ipc.ResourceContents, uri string) *mcp.ResourceContents {
	if c.URI == "" {
		c.URI = uri
	}
	return &mcp.ResourceContents{URI: c.URI, MIMEType: c.MimeType, Text: c.Text, Blob: c.Blob}
}

// internalError is a JSON-RPC internal error: the server could not do
// what was asked, and goes on serving.
func internalError(format string, a ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf(format, a...)}
}
