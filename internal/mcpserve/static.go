package mcpserve

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/internal/commandclient"
	"github.com/astrid-go/astrid/ipc"
)

// The capsules' declared files (seed 003, docs/static.md), served the way
// their static engines already answer them: [[skill]] and
// [[context_file]] entries are resources, read from the owning capsule's
// static answer; [[command]] slash commands with a prompt are prompts,
// expanded as chat and ACP expand `/name args` (commandclient).

// The static engine's topics this server asks (docs/static.md).
const (
	staticSkillsTopic  = "static.v1.request.skills"
	staticContextTopic = "static.v1.request.context"
)

func staticSkillsAnswer(id string) string  { return "static.v1.response.skills." + id }
func staticContextAnswer(id string) string { return "static.v1.response.context." + id }

// The kinds of static resource, as their URIs name them.
const (
	kindSkill   = "skills"
	kindContext = "context"
)

// staticURI is the URI a capsule's declared file is served at:
// astrid://<capsule>/skills/<name> or astrid://<capsule>/context/<name>.
func staticURI(capsule, kind, name string) string {
	return "astrid://" + capsule + "/" + kind + "/" + name
}

// staticFile is one declared file as a static engine answers it.
type staticFile struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	File        string `json:"file"`
	Content     string `json:"content"`
}

// staticFiles asks the static engines for kind and returns each
// capsule's files, in dispatch order.
func (s *Server) staticFiles(ctx context.Context, kind string) (map[string][]staticFile, []string, error) {
	topic, answer, field := staticSkillsTopic, staticSkillsAnswer, "skills"
	if kind == kindContext {
		topic, answer, field = staticContextTopic, staticContextAnswer, "context_files"
	}
	answers, order, missing, err := s.describe(ctx, topic, answer)
	if err != nil {
		return nil, nil, err
	}
	if len(missing) > 0 {
		s.log.Warn("mcp serve: capsules did not answer for their files in time", "topic", topic, "capsules", missing)
	}
	files := map[string][]staticFile{}
	for id, raws := range answers {
		for _, raw := range raws {
			var a map[string]json.RawMessage
			var fs []staticFile
			if json.Unmarshal(raw, &a) != nil || json.Unmarshal(a[field], &fs) != nil {
				s.log.Warn("mcp serve: malformed static answer", "capsule", id, "topic", topic)
				continue
			}
			files[id] = append(files[id], fs...)
		}
	}
	return files, order, nil
}

// staticResources are the skills and context files as resources.
func (s *Server) staticResources(ctx context.Context) ([]resourceEntry, []string, error) {
	var out []resourceEntry
	var silent []string
	for _, kind := range []string{kindSkill, kindContext} {
		files, order, err := s.staticFiles(ctx, kind)
		if err != nil {
			return nil, nil, err
		}
		for _, id := range order {
			fs, ok := files[id]
			if !ok {
				silent = append(silent, id)
			}
			for _, f := range fs {
				uri := staticURI(id, kind, f.Name)
				if checkURI(uri) != nil {
					s.log.Warn("mcp serve: declared file not served: its name makes no URI", "capsule", id, "name", clip(f.Name))
					continue
				}
				desc := f.Description
				if desc == "" {
					desc = fmt.Sprintf("%s of capsule %s (%s)", strings.TrimSuffix(kind, "s"), id, f.File)
				}
				out = append(out, resourceEntry{capsule: id, kind: kind, d: ipc.ResourceDescriptor{
					URI: uri, Name: f.Name, Description: desc, MimeType: mimeOf(f.File), Size: int64(len(f.Content)),
				}})
			}
		}
	}
	return out, silent, nil
}

// mimeOf is a declared file's MIME type, by its name.
func mimeOf(file string) string {
	switch strings.ToLower(path.Ext(file)) {
	case ".md", ".markdown":
		return "text/markdown"
	case ".json":
		return "application/json"
	}
	return "text/plain"
}

// staticReader reads a declared file: the owning capsule's static engine
// asked again, so the text is what the capsule serves now.
func (s *Server) staticReader(capsule, kind, name string) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		files, _, err := s.staticFiles(ctx, kind)
		if err != nil {
			return nil, internalError("resource %s: %v", clip(uri), err)
		}
		for _, f := range files[capsule] {
			if f.Name == name {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mimeOf(f.File), Text: f.Content}}}, nil
			}
		}
		return nil, mcp.ResourceNotFoundError(uri)
	}
}

// commandArgument is the one argument a command's prompt takes: what
// follows `/name` in chat.
var commandArgument = ipc.PromptArgument{Name: "args", Description: "the words after the command's name (its $ARGUMENTS, $1 to $9)"}

// commands lists the capsules' slash commands, waiting for their static
// engines at most the describe window.
func (s *Server) commands(ctx context.Context) ([]commandclient.Command, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Window)
	defer cancel()
	return commandclient.List(ctx, s.opts.Kernel, s.opts.Principal, nil)
}

// commandPrompts are the capsules' slash commands that have a prompt.
func (s *Server) commandPrompts(ctx context.Context) ([]promptEntry, error) {
	cmds, err := s.commands(ctx)
	if err != nil {
		return nil, err
	}
	var out []promptEntry
	for _, c := range cmds {
		if strings.TrimSpace(c.Prompt) == "" {
			continue
		}
		desc := c.Description
		if desc == "" {
			desc = fmt.Sprintf("/%s of capsule %s", c.Name, c.Capsule)
		}
		out = append(out, promptEntry{capsule: c.Capsule, command: true,
			d: ipc.PromptDescriptor{Name: c.Name, Description: desc, Arguments: []ipc.PromptArgument{commandArgument}}})
	}
	return out, nil
}

// commandPrompter expands a command's prompt: its capsule's static
// engine asked again for the command, then expanded as chat does.
func (s *Server) commandPrompter(capsule string, d ipc.PromptDescriptor) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		if err := checkPromptArguments(d, req.Params.Arguments); err != nil {
			return nil, err
		}
		cmds, err := s.commands(ctx)
		if err != nil {
			return nil, internalError("prompt %s: %v", d.Name, err)
		}
		c, ok := commandclient.Find(cmds, d.Name)
		if !ok || c.Capsule != capsule {
			return nil, invalidParams("unknown prompt %q (capsule %s serves it no more)", d.Name, capsule)
		}
		text, err := c.Expand(req.Params.Arguments[commandArgument.Name])
		if err != nil {
			return nil, invalidParams("prompt %s: %v", d.Name, err)
		}
		return &mcp.GetPromptResult{Description: d.Description, Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}, nil
	}
}
