package static

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

// Engine serves one capsule's static files.
type Engine struct {
	m    *manifest.Manifest
	host *host.Capsule

	mu      sync.Mutex
	content *content
	health  capsule.Health
}

var (
	_ capsule.Engine          = (*Engine)(nil)
	_ capsule.SurfaceProvider = (*Engine)(nil)
)

// New returns the static engine of capsule m, publishing through h.
func New(m *manifest.Manifest, h *host.Capsule) *Engine {
	return &Engine{m: m, host: h}
}

// Name implements capsule.Engine.
func (e *Engine) Name() string { return "static" }

// Load implements capsule.Engine: it reads the declared files.
func (e *Engine) Load(context.Context) error {
	c, err := readContent(e.m)
	if err != nil {
		err = fmt.Errorf("static: %w", err)
		e.set(nil, capsule.Health{State: capsule.Failed, Err: err})
		return err
	}
	e.set(c, capsule.Health{State: capsule.Ready})
	return nil
}

// WaitReady implements capsule.Engine; files read at load need no waiting.
func (e *Engine) WaitReady(ctx context.Context) error { return ctx.Err() }

// Unload implements capsule.Engine.
func (e *Engine) Unload(context.Context) error {
	e.set(nil, capsule.Health{State: capsule.Unloaded})
	return nil
}

// Health implements capsule.Engine.
func (e *Engine) Health() capsule.Health {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.health
}

func (e *Engine) set(c *content, h capsule.Health) {
	e.mu.Lock()
	e.content, e.health = c, h
	e.mu.Unlock()
}

// Surface implements capsule.SurfaceProvider: for each kind the capsule
// declares, an interceptor on its request topic and the grant to publish on
// its own response topic. A capsule that declares nothing static gets no
// surface, so it is not asked.
func (e *Engine) Surface() capsule.Surface {
	var s capsule.Surface
	add := func(request, handler, response string) {
		s.Subscribe = append(s.Subscribe, request)
		s.Publish = append(s.Publish, response)
		s.Interceptors = append(s.Interceptors, manifest.Interceptor{Pattern: request, Handler: handler, Priority: manifest.DefaultPriority})
	}
	id := e.m.ID()
	if len(e.m.ContextFiles) > 0 {
		add(ContextRequestTopic, ContextHandler, ContextResponseTopic(id))
	}
	if len(e.m.Skills) > 0 {
		add(SkillsRequestTopic, SkillsHandler, SkillsResponseTopic(id))
	}
	if len(e.m.Commands) > 0 {
		add(CommandsRequestTopic, CommandsHandler, CommandsResponseTopic(id))
	}
	return s
}

// Invoke implements capsule.Engine: a static request is answered on the
// capsule's response topic, and the request itself continues unchanged.
func (e *Engine) Invoke(ctx context.Context, inv hostapi.Invocation) (hostapi.Verdict, error) {
	e.mu.Lock()
	c := e.content
	e.mu.Unlock()
	if c == nil {
		return hostapi.Verdict{}, capsule.ErrNotSupported
	}
	var req Request
	// The request's data is optional and free-form: an unreadable one is
	// answered without a request id rather than refused.
	_ = json.Unmarshal(inv.Payload, &req)
	id := e.m.ID()
	var topic string
	var answer any
	switch inv.Handler {
	case ContextHandler:
		topic, answer = ContextResponseTopic(id), ContextResponse{Capsule: id, RequestID: req.RequestID, ContextFiles: nonNil(c.context)}
	case SkillsHandler:
		topic, answer = SkillsResponseTopic(id), SkillsResponse{Capsule: id, RequestID: req.RequestID, Skills: nonNil(c.skills)}
	case CommandsHandler:
		topic, answer = CommandsResponseTopic(id), CommandsResponse{Capsule: id, RequestID: req.RequestID, Commands: nonNil(c.commands)}
	default:
		return hostapi.Verdict{}, capsule.ErrNotSupported
	}
	data, err := json.Marshal(answer)
	if err != nil {
		return hostapi.Verdict{}, fmt.Errorf("static: encode %s answer: %w", inv.Handler, err)
	}
	payload, err := ipc.EncodePayload(ipc.Custom{Data: data})
	if err != nil {
		return hostapi.Verdict{}, fmt.Errorf("static: encode %s answer: %w", inv.Handler, err)
	}
	call, _ := e.host.Begin(ctx, inv.Principal)
	defer call.End()
	if err := call.Publish(topic, payload); err != nil {
		return hostapi.Verdict{}, fmt.Errorf("static: answer on %s: %w", topic, err)
	}
	return hostapi.Verdict{Action: hostapi.Continue}, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
