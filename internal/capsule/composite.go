package capsule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/clock"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

// Composite is one capsule: its manifest and its engines, loaded and unloaded
// as a unit. It is the dispatch.Target the dispatcher invokes interceptors on.
type Composite struct {
	id       string
	manifest *manifest.Manifest
	engines  []Engine
	deadline time.Duration
	log      *slog.Logger

	mu      sync.Mutex
	state   State
	lastErr error
	loaded  int // engines successfully loaded, for rollback
}

// DefaultCallDeadline bounds one handler call unless configured otherwise.
const DefaultCallDeadline = 5 * time.Minute

// NewComposite builds a capsule from its manifest and engines, in the order
// they are loaded and asked.
func NewComposite(m *manifest.Manifest, deadline time.Duration, log *slog.Logger, engines ...Engine) *Composite {
	if deadline <= 0 {
		deadline = DefaultCallDeadline
	}
	if log == nil {
		log = slog.Default()
	}
	return &Composite{id: m.ID(), manifest: m, engines: engines, deadline: deadline, log: log.With("capsule", m.ID())}
}

// ID is the capsule id.
func (c *Composite) ID() string { return c.id }

// Manifest is the capsule's manifest.
func (c *Composite) Manifest() *manifest.Manifest { return c.manifest }

// Engines lists the engines' names in order.
func (c *Composite) Engines() []string {
	out := make([]string, len(c.engines))
	for i, e := range c.engines {
		out[i] = e.Name()
	}
	return out
}

// Load loads the engines in order and stops at the first failure: the
// capsule is then Failed and the engines already loaded are unloaded in
// reverse order.
func (c *Composite) Load(ctx context.Context) error {
	c.mu.Lock()
	if c.state == Ready || c.state == Loading {
		c.mu.Unlock()
		return fmt.Errorf("capsule %s: load: already %s", c.id, c.state)
	}
	c.state, c.lastErr, c.loaded = Loading, nil, 0
	c.mu.Unlock()

	for i, e := range c.engines {
		if err := e.Load(ctx); err != nil {
			err = fmt.Errorf("capsule %s: engine %s: load: %w", c.id, e.Name(), err)
			var rollback []error
			for j := i - 1; j >= 0; j-- {
				if uerr := c.engines[j].Unload(context.WithoutCancel(ctx)); uerr != nil {
					c.log.Warn("rollback unload failed", "engine", c.engines[j].Name(), "err", uerr)
					rollback = append(rollback, fmt.Errorf("engine %s: %w", c.engines[j].Name(), uerr))
				}
			}
			if len(rollback) > 0 {
				// The operator must learn that something may still be
				// running, not only that the load failed.
				err = fmt.Errorf("%w; rollback also failed: %w", err, errors.Join(rollback...))
			}
			c.setState(Failed, err)
			return err
		}
		c.mu.Lock()
		c.loaded = i + 1
		c.mu.Unlock()
	}
	c.setState(Ready, nil)
	return nil
}

// WaitReady waits for every engine to be ready, all under one deadline.
func (c *Composite) WaitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for _, e := range c.engines {
		// The deadline is shared: an engine that used it up leaves the
		// next none, even if that one would answer ready at once.
		err := ctx.Err()
		if err == nil {
			err = e.WaitReady(ctx)
		}
		if err != nil {
			err = fmt.Errorf("capsule %s: engine %s: not ready within %s: %w", c.id, e.Name(), timeout, err)
			c.setState(Failed, err)
			return err
		}
	}
	return nil
}

// Unload unloads every engine, best effort, in reverse order; it returns the
// joined errors.
func (c *Composite) Unload(ctx context.Context) error {
	c.mu.Lock()
	c.state = Unloading
	c.mu.Unlock()
	var errs []error
	for i := len(c.engines) - 1; i >= 0; i-- {
		if err := c.engines[i].Unload(ctx); err != nil {
			errs = append(errs, fmt.Errorf("capsule %s: engine %s: unload: %w", c.id, c.engines[i].Name(), err))
		}
	}
	err := errors.Join(errs...)
	c.setState(Unloaded, err)
	return err
}

// Surface is the union of what the capsule's loaded engines add to its
// manifest's bus surface (see SurfaceProvider).
func (c *Composite) Surface() Surface {
	var s Surface
	for _, e := range c.engines {
		if p, ok := e.(SurfaceProvider); ok {
			es := p.Surface()
			s.Publish = append(s.Publish, es.Publish...)
			s.Subscribe = append(s.Subscribe, es.Subscribe...)
			s.Interceptors = append(s.Interceptors, es.Interceptors...)
		}
	}
	return s
}

// Restarts sums what the engines restarted by themselves (an MCP server's
// process, Restarts() int), for the capsule's status.
func (c *Composite) Restarts() int {
	n := 0
	for _, e := range c.engines {
		if r, ok := e.(interface{ Restarts() int }); ok {
			n += r.Restarts()
		}
	}
	return n
}

// Health is the first failed engine's health, else the capsule's own state.
func (c *Composite) Health() Health {
	for _, e := range c.engines {
		if h := e.Health(); h.State == Failed {
			return h
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return Health{State: c.state, Err: c.lastErr}
}

func (c *Composite) setState(s State, err error) {
	c.mu.Lock()
	c.state, c.lastErr = s, err
	c.mu.Unlock()
}

// Invoke tries the engines in turn, skipping those that answer
// ErrNotSupported, under the capsule's call deadline.
func (c *Composite) Invoke(ctx context.Context, inv hostapi.Invocation) (hostapi.Verdict, error) {
	if h := c.Health(); h.State != Ready {
		return hostapi.Verdict{}, fmt.Errorf("capsule %s: not ready (%s)", c.id, h.State)
	}
	// Every engine tried runs under the one deadline; the host layer makes
	// each call a context of its own under it (host.Begin), which ends with
	// that call, so an engine that declines does not end it for the next.
	ctx, cancel := context.WithDeadline(ctx, clock.Process.Now().Add(c.deadline))
	defer cancel()
	for _, e := range c.engines {
		v, err := e.Invoke(ctx, inv)
		if errors.Is(err, ErrNotSupported) {
			continue
		}
		return v, err
	}
	return hostapi.Verdict{}, ErrNotSupported
}

// Intercept implements dispatch.Target.
func (c *Composite) Intercept(ctx context.Context, inv dispatch.Invocation) (dispatch.Verdict, error) {
	principal := inv.Principal
	if principal == "" {
		principal = ipc.DefaultPrincipal
	}
	payload := inv.Payload
	if payload == nil && inv.Envelope != nil {
		payload = inv.Envelope.Payload
	}
	hinv := hostapi.Invocation{
		Handler:   inv.Handler,
		Pattern:   inv.Pattern,
		Principal: principal,
		Payload:   ipc.GuestBytes(json.RawMessage(payload)),
	}
	if inv.Envelope != nil {
		hinv.Topic = inv.Envelope.Topic
		hinv.SourceID = inv.Envelope.SourceID
		if inv.Envelope.IsRequest() {
			hinv.ReplyTo, hinv.CorrelationID = inv.Envelope.ReplyTo(), inv.Envelope.CorrelationID()
		}
	}
	v, err := c.Invoke(ctx, hinv)
	if errors.Is(err, ErrNotSupported) {
		return dispatch.Verdict{}, dispatch.ErrNotSupported
	}
	if err != nil {
		return dispatch.Verdict{Action: dispatch.Deny, Reason: err.Error()}, err
	}
	return v, nil
}
