package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/host"
)

// A remote server may ask the person for values while it runs a call
// (elicitation/create, form mode): each field is asked in turn through
// the host's elicit call, the same frontend question a capsule's env
// elicitation is, on behalf of the call in flight. A run with no frontend
// (headless) has nobody to ask, and the request is refused. URL mode is
// refused: the engine does not send a person to a server's web page.

// maxElicitFields bounds the fields of one elicitation: each is a question
// a person answers, one after another.
const maxElicitFields = 16

// calls are the remote engine's tool calls in flight, so that a server's
// request (which names no call) reaches the person on whose behalf the
// server runs.
type calls struct {
	mu  sync.Mutex
	set []*host.Call
}

func (c *calls) add(call *host.Call) func() {
	c.mu.Lock()
	c.set = append(c.set, call)
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if i := slices.Index(c.set, call); i >= 0 {
			c.set = slices.Delete(c.set, i, i+1)
		}
	}
}

// only is the one call in flight; a request made while several run could
// be any one's, and asking the wrong person is worse than not asking.
func (c *calls) only() (*host.Call, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch len(c.set) {
	case 1:
		return c.set[0], nil
	case 0:
		return nil, fmt.Errorf("no tool call is running, and the server may ask only during one")
	default:
		return nil, fmt.Errorf("%d tool calls are running, and the request does not say for which one", len(c.set))
	}
}

// elicitSchema is the flat form MCP allows (the SDK has checked that).
type elicitSchema struct {
	Properties map[string]struct {
		Type        string `json:"type"`
		Title       string `json:"title"`
		Description string `json:"description"`
		Enum        []any  `json:"enum"`
		Default     any    `json:"default"`
	} `json:"properties"`
	Required []string `json:"required"`
}

// elicit answers a server's elicitation request.
func (e *Engine) elicit(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	refuse := func(format string, args ...any) (*mcp.ElicitResult, error) {
		msg := fmt.Sprintf(format, args...)
		e.log.Warn("mcp: elicitation refused", "reason", msg)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Astrid refused the elicitation: " + msg}
	}
	p := req.Params
	if p.Mode == "url" {
		return refuse("URL elicitation is not supported")
	}
	var schema elicitSchema
	b, err := json.Marshal(p.RequestedSchema)
	if err == nil {
		err = json.Unmarshal(b, &schema)
	}
	if err != nil {
		return refuse("its schema does not decode: %v", err)
	}
	if n := len(schema.Properties); n > maxElicitFields {
		return refuse("it asks for %d fields; at most %d are asked", n, maxElicitFields)
	}
	call, err := e.remote.calls.only()
	if err != nil {
		return refuse("%v", err)
	}
	names := make([]string, 0, len(schema.Properties))
	for name := range schema.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	content := map[string]any{}
	for _, name := range names {
		prop := schema.Properties[name]
		q := hostapi.ElicitRequest{Key: name, Kind: hostapi.ElicitText, Prompt: prop.Title, Description: clipText(p.Message + " " + prop.Description)}
		if q.Prompt == "" {
			q.Prompt = name
		}
		switch {
		case prop.Type == "boolean":
			q.Kind, q.Options = hostapi.ElicitSelect, []string{"true", "false"}
		case len(prop.Enum) > 0:
			q.Kind = hostapi.ElicitSelect
			for _, v := range prop.Enum {
				q.Options = append(q.Options, fmt.Sprint(v))
			}
		}
		// The schema's default is offered to the person (SEP-1034); a
		// select's only when it is one of the options, as the host asks.
		if prop.Default != nil {
			if d := fmt.Sprint(prop.Default); q.Kind != hostapi.ElicitSelect || slices.Contains(q.Options, d) {
				q.Default = &d
			}
		}
		ans, err := call.Elicit(q)
		switch hostapi.CodeOf(err) {
		case hostapi.CodeDeclined:
			return &mcp.ElicitResult{Action: "decline"}, nil
		case hostapi.CodeCancelled:
			return &mcp.ElicitResult{Action: "cancel"}, nil
		case hostapi.CodeUnavailable:
			return refuse("there is no person to ask (a headless run)")
		}
		if err != nil {
			return refuse("asking for %s: %v", name, err)
		}
		v, err := typed(prop.Type, ans.Value)
		if err != nil {
			return refuse("the answer for %s: %v", name, err)
		}
		content[name] = v
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil
}

// typed converts a person's text answer to the property's JSON type.
func typed(typ, v string) (any, error) {
	switch typ {
	case "boolean":
		return strconv.ParseBool(v)
	case "integer":
		return strconv.ParseInt(v, 10, 64)
	case "number":
		return strconv.ParseFloat(v, 64)
	}
	return v, nil
}

// clipText keeps shown text within the host's bound on a description.
func clipText(s string) string {
	if len(s) <= hostapi.MaxElicitPrompt {
		return s
	}
	return clipBytes(s, hostapi.MaxElicitPrompt-len("…")) + "…"
}
