package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/egress"
	"github.com/astrid-go/astrid/internal/engine/native"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

// Options configure a kernel.
type Options struct {
	// Home is $ASTRID_HOME (state, homes, capsules). Required.
	Home string
	// Workspace is the directory the agent works on. Required.
	Workspace string
	Config    config.Config
	Logger    *slog.Logger
	// Builtins overrides the built-in capsules (tests); nil means Builtins().
	Builtins []Builtin
	// Egress overrides the egress options (tests inject resolver/dialer).
	Egress *egress.Options
}

// Kernel is one running kernel.
type Kernel struct {
	opts       Options
	log        *slog.Logger
	Bus        *bus.Bus
	Dispatcher *dispatch.Dispatcher
	Store      *store.Store
	Registry   *capsule.Registry
	Cancels    *host.Cancels
	hostDeps   host.Deps

	stop   context.CancelFunc
	wg     sync.WaitGroup
	closed sync.Once
}

// Boot starts a kernel and loads the built-in capsules.
func Boot(ctx context.Context, opts Options) (*Kernel, error) {
	if opts.Home == "" || opts.Workspace == "" {
		return nil, errors.New("kernel: Home and Workspace are required")
	}
	ws, err := filepath.Abs(opts.Workspace)
	if err != nil {
		return nil, fmt.Errorf("kernel: workspace: %w", err)
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("kernel: workspace %s is not a directory", ws)
	}
	opts.Workspace = ws
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	cfg := opts.Config
	st, err := store.Open(filepath.Join(opts.Home, "state.db"), store.Options{})
	if err != nil {
		return nil, fmt.Errorf("kernel: %w", err)
	}
	b := bus.New(bus.Options{RouteBudget: cfg.Limits.RouteBudgetBytes, MaxMessage: cfg.Limits.MaxMessageBytes, Logger: log})
	d := dispatch.New(b, dispatch.Options{
		RateBytesPerSec: int64(cfg.Limits.RateBytesPerSec),
		RateBurst:       int64(cfg.Limits.RateBurstBytes),
		QueueDepth:      cfg.Limits.QueueDepth,
		Logger:          log,
	})
	eg := egress.Options{AllowLocal: cfg.Egress.Allow, Logger: log}
	if opts.Egress != nil {
		eg = *opts.Egress
	}
	k := &Kernel{
		opts: opts, log: log, Bus: b, Dispatcher: d, Store: st,
		Registry: capsule.NewRegistry(), Cancels: host.NewCancels(),
	}
	k.hostDeps = host.Deps{
		Dispatcher: d, Store: st, Cancels: k.Cancels, Logger: log,
		Workspace: ws, HomesDir: filepath.Join(opts.Home, "home"), Egress: eg,
	}
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	k.stop = stop
	if err := d.Register(clientACL, clientTarget{}); err != nil {
		k.Close()
		return nil, fmt.Errorf("kernel: register the CLI client: %w", err)
	}
	if err := k.startCancelListener(runCtx); err != nil {
		k.Close()
		return nil, err
	}
	builtins := opts.Builtins
	if builtins == nil {
		builtins = Builtins()
	}
	for _, bi := range builtins {
		if err := k.LoadNative(ctx, bi); err != nil {
			k.Close()
			return nil, err
		}
	}
	return k, nil
}

// LoadNative loads one sdk capsule in-process under its manifest.
func (k *Kernel) LoadNative(ctx context.Context, bi Builtin) error {
	m, diags := manifest.Parse(bi.Manifest, "Capsule.toml", "")
	if err := diags.Err(false); err != nil {
		return fmt.Errorf("kernel: built-in manifest: %w", err)
	}
	code := bi.New()
	return k.Load(ctx, m, "", func(h *host.Capsule) ([]capsule.Engine, error) {
		return []capsule.Engine{native.New(code, h)}, nil
	})
}

// EngineFactory builds a capsule's engines once its host exists.
type EngineFactory func(h *host.Capsule) ([]capsule.Engine, error)

// Load loads capsule m, installed in installDir ("" for a built-in), with
// the engines newEngines builds: the host is bound, the engines loaded in
// order (rolled back on failure), the ACL and interceptors registered with
// the dispatcher, and the capsule added to the registry.
func (k *Kernel) Load(ctx context.Context, m *manifest.Manifest, installDir string, newEngines EngineFactory) error {
	id := m.ID()
	if id == ipc.KernelSourceID || id == ClientID {
		return fmt.Errorf("kernel: capsule id %q is reserved", id)
	}
	if installDir == "" {
		installDir = filepath.Join(k.opts.Home, "builtin", id)
	}
	h, err := host.NewCapsule(k.hostDeps, m, installDir, k.capsuleConfig(id))
	if err != nil {
		return fmt.Errorf("kernel: load %s: %w", id, err)
	}
	engines, err := newEngines(h)
	if err != nil {
		return fmt.Errorf("kernel: load %s: %w", id, err)
	}
	comp := capsule.NewComposite(m, k.opts.Config.CallDeadline.Duration, k.log, engines...)
	if err := comp.Load(ctx); err != nil {
		return fmt.Errorf("kernel: %w", err)
	}
	if err := k.Dispatcher.Register(aclOf(m, comp.Surface()), comp); err != nil {
		_ = comp.Unload(ctx)
		return fmt.Errorf("kernel: load %s: %w", id, err)
	}
	if err := k.Registry.Add(comp); err != nil {
		k.Dispatcher.Unregister(id)
		_ = comp.Unload(ctx)
		return fmt.Errorf("kernel: %w", err)
	}
	k.log.Debug("capsule loaded", "capsule", id, "engines", comp.Engines())
	return nil
}

// Unload unregisters and unloads capsule id.
func (k *Kernel) Unload(ctx context.Context, id string) error {
	c, ok := k.Registry.Remove(id)
	if !ok {
		return fmt.Errorf("kernel: unload %s: not loaded", id)
	}
	k.Dispatcher.Unregister(id)
	return c.Unload(ctx)
}

// capsuleConfig returns the operator-set [env] values of capsule id, plain
// values and unsealed secrets alike.
func (k *Kernel) capsuleConfig(id string) map[string]string {
	out := map[string]string{}
	plain := k.Store.Config(id)
	keys, err := plain.List("")
	if err != nil {
		k.log.Warn("capsule config unreadable", "capsule", id, "err", err)
	}
	for _, key := range keys {
		if v, ok, err := plain.Get(key); err == nil && ok {
			out[key] = string(v)
		}
	}
	secrets := k.Store.Secrets(id)
	keys, err = secrets.List()
	if err != nil {
		k.log.Warn("capsule secrets unreadable", "capsule", id, "err", err)
	}
	for _, key := range keys {
		if v, ok, err := secrets.Get(key); err == nil && ok {
			out[key] = string(v)
		} else if err != nil {
			k.log.Warn("capsule secret not unsealed", "capsule", id, "key", key, "err", err)
		}
	}
	return out
}

func aclOf(m *manifest.Manifest, extra capsule.Surface) dispatch.CapsuleACL {
	acl := dispatch.CapsuleACL{
		ID:        m.ID(),
		Publish:   append(m.PublishPatterns(), extra.Publish...),
		Subscribe: append(m.SubscribePatterns(), extra.Subscribe...),
	}
	for _, i := range append(m.Interceptors(), extra.Interceptors...) {
		acl.Interceptors = append(acl.Interceptors, dispatch.Interceptor{Pattern: i.Pattern, Handler: i.Handler, Priority: i.Priority})
	}
	return acl
}

// startCancelListener runs the kernel's one listener on
// tool.v1.request.cancel: every call holding a named cancel key is
// interrupted.
func (k *Kernel) startCancelListener(ctx context.Context) error {
	r, err := k.Bus.Subscribe(bus.RouteSpec{Owner: ipc.KernelSourceID, Pattern: ipc.ToolRequestCancelTopic})
	if err != nil {
		return fmt.Errorf("kernel: cancel listener: %w", err)
	}
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		defer r.Close()
		for {
			d, err := r.Recv(ctx)
			if err != nil {
				return
			}
			var req ipc.ToolCancelRequest
			if err := json.Unmarshal(ipc.GuestBytes(d.Envelope.Payload), &req); err != nil {
				k.log.Warn("malformed cancel request", "source", d.Envelope.SourceID, "err", err)
				continue
			}
			n := k.Cancels.Cancel(errors.New("cancelled by tool.v1.request.cancel"), req.CallIDs...)
			k.log.Info("cancel request", "source", d.Envelope.SourceID, "call_ids", req.CallIDs, "interrupted", n)
		}
	}()
	return nil
}

// Close unloads every capsule and stops the kernel. It is idempotent.
func (k *Kernel) Close() {
	k.closed.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if k.Registry != nil {
			list := k.Registry.List()
			for i := len(list) - 1; i >= 0; i-- {
				c := list[i]
				k.Dispatcher.Unregister(c.ID())
				if err := c.Unload(ctx); err != nil {
					k.log.Warn("unload", "capsule", c.ID(), "err", err)
				}
				k.Registry.Remove(c.ID())
			}
		}
		if k.stop != nil {
			k.stop()
		}
		k.wg.Wait()
		if k.Dispatcher != nil {
			k.Dispatcher.Close()
		}
		if k.Bus != nil {
			k.Bus.Close()
		}
		if k.Store != nil {
			if err := k.Store.Close(); err != nil {
				k.log.Warn("store close", "err", err)
			}
		}
	})
}
