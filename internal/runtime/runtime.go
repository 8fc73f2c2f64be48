package runtime

import (
	"context"
	"errors"
	"fmt"
	"github.com/astrid-go/astrid/internal/audit"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/grants"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/manifest"
)

// DefaultReadyTimeout bounds how long a capsule's engines may take to get
// ready after loading (an MCP server started through npx takes seconds).
const DefaultReadyTimeout = 30 * time.Second

// Options wire a Runtime to the kernel.
type Options struct {
	Dispatcher *dispatch.Dispatcher
	// Registry is the kernel's registry of loaded capsules; the runtime is
	// the only one that changes it.
	Registry *capsule.Registry
	// Host are the services every capsule's host shares.
	Host host.Deps
	// BuiltinDir holds the built-ins' install directories (what cwd://
	// means for them): BuiltinDir/<id>.
	BuiltinDir string
	// CapsulesDir is $ASTRID_HOME/capsules, the operator's installs.
	CapsulesDir string
	// SkillsDir is $ASTRID_HOME/skills, the operator's skill library,
	// served as the capsule SkillsCapsuleID ("" serves none).
	SkillsDir string
	Builtins  []Builtin
	Engines   Engines
	// Config returns capsule id's operator-set [env] values.
	Config func(id string) map[string]string
	// Approvals are the operator's approval records: an installed capsule
	// loads only within what its record holds (grants.Check). Nil: no
	// installed capsule loads.
	Approvals grants.Approvals
	// AskEnv, when set (a person is present), is asked for a capsule's
	// required [env] values that Config has none of; nil fails such a
	// load with the command that sets them (resolveEnv).
	AskEnv EnvAsker
	// OnboardMissingEnv (a daemon, whose people come and go) loads a
	// capsule whose required [env] values are unset; each calling
	// principal is asked for them when the capsule reads one (host
	// env.go), instead of the load failing.
	OnboardMissingEnv bool
	// Reserved are ids no capsule may take (the kernel's own, the CLI's).
	Reserved     []string
	CallDeadline time.Duration
	ReadyTimeout time.Duration
	// ProvidersFile records which capsule provides each tool, so that a
	// contested tool stays with its provider across restarts (claimTools);
	// "" keeps no record.
	ProvidersFile string
	Logger        *slog.Logger
	// Principals lists the principals besides the default one that have
	// acted (the kernel's ledger knows them): astrid.v1.capsules_loaded is
	// published once for each as well, as that principal, so a capsule's
	// per-principal caches (kept in that principal's KV) hear of a change.
	// Nil: the default principal only.
	Principals func() []string
	// Forgotten, if set, is told of each capsule unloaded for good (not
	// reloaded): what was allowed "this session" to that capsule's code
	// ends with it (the kernel drops its session capability tokens).
	Forgotten func(id string)
}

// Runtime loads, unloads and reloads capsules while the kernel runs. It is
// safe for concurrent use; changes are serialised.
type Runtime struct {
	opts Options
	log  *slog.Logger

	ops sync.Mutex // serialises Boot, Load, Unload, Reload and Close
	// commit makes a load's check that its tools are free and its
	// registration one step, since a boot loads capsules concurrently.
	commit sync.Mutex

	mu       sync.Mutex // guards what List reads
	entries  map[string]*entry
	order    []string  // ids in the order they were first loaded
	problems []Problem // capsules found but never given an entry
	closed   bool
	boot     *bootRun // the last boot, nil before the first
	// departing are the hosts of capsules being unloaded and forgotten:
	// the calls their unload discards are still answered through them.
	departing map[string]*host.Capsule

	watchStop context.CancelFunc
	watchDone chan struct{}
	watching  *watcher // the running watcher, nil when none (Rescan settles it)

	// The health monitor (health.go): its policy, its record of each
	// failed capsule's restarts, and its stop.
	policy     HealthPolicy
	restarts   map[string]*restarts
	healthStop context.CancelFunc
	healthDone chan struct{}
}

// entry is one capsule the runtime knows: loaded, or failed with its error.
type entry struct {
	cand    *Candidate
	factory EngineFactory // nil: the loader's
	comp    *capsule.Composite
	host    *host.Capsule
	tools   []string
	loaded  bool
	loading bool // a boot will load it; nothing is built yet
	err     error
}

// ErrWidened is wrapped by a load or reload refused because the capsule's
// manifest asks for more than the operator approved at install.
var ErrWidened = grants.ErrWidened

// New returns a runtime with nothing loaded.
func New(opts Options) *Runtime {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ReadyTimeout <= 0 {
		opts.ReadyTimeout = DefaultReadyTimeout
	}
	if opts.Config == nil {
		opts.Config = func(string) map[string]string { return nil }
	}
	return &Runtime{opts: opts, log: opts.Logger, entries: map[string]*entry{}, restarts: map[string]*restarts{}}
}

// Load loads an installed capsule while the kernel runs, as Boot would:
// its name may not be a built-in's, and its required imports must be met by
// capsules already loaded.
func (r *Runtime) Load(ctx context.Context, c *Candidate) error {
	r.ops.Lock()
	defer r.ops.Unlock()
	if err := r.admit(c); err != nil {
		r.mu.Lock()
		e, ok := r.entries[c.ID()]
		r.mu.Unlock()
		if ok && !e.loaded && e.cand.Dir == c.Dir {
			r.record(&entry{cand: c, err: err})
		} else {
			// Never over another capsule's record (a built-in's, say).
			r.setProblem(Problem{ID: c.ID(), Dir: c.Dir, Err: err})
		}
		r.publishLoaded()
		return fmt.Errorf("runtime: load: %w", err)
	}
	r.forgetRestarts(c.ID())
	err := r.load(ctx, c, nil)
	r.publishLoaded()
	return err
}

// LoadWith loads capsule m, installed in dir ("" for one without files),
// with exactly the engines f builds, plus the static engine when m declares
// static files or commands (the caller chose the engines; the static ones
// must still be served).
func (r *Runtime) LoadWith(ctx context.Context, m *manifest.Manifest, dir string, f EngineFactory) error {
	r.ops.Lock()
	defer r.ops.Unlock()
	err := r.load(ctx, &Candidate{Manifest: m, Dir: dir}, f)
	r.publishLoaded()
	return err
}

// LoadBuiltin loads a capsule linked into the binary.
func (r *Runtime) LoadBuiltin(ctx context.Context, b Builtin) error {
	m, diags := manifest.Parse(b.Manifest, manifest.FileName, "")
	if err := diags.Err(false); err != nil {
		return fmt.Errorf("runtime: built-in manifest: %w", err)
	}
	r.ops.Lock()
	defer r.ops.Unlock()
	err := r.load(ctx, &Candidate{Manifest: m, Code: b.New}, nil)
	r.publishLoaded()
	return err
}

// admit checks what Boot's discovery and order would for a capsule that
// arrives alone.
func (r *Runtime) admit(c *Candidate) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := c.ID()
	if e, ok := r.entries[id]; ok {
		if e.cand.Builtin() {
			return fmt.Errorf("capsule %s in %s: the name is taken by a built-in capsule; rename the package to install it", id, c.Dir)
		}
		if e.loaded || e.cand.Dir != c.Dir {
			return fmt.Errorf("capsule %s in %s: the name is taken by the capsule in %s", id, c.Dir, e.cand.Dir)
		}
	}
	for _, imp := range c.Manifest.Imports {
		if imp.Optional {
			continue
		}
		met := false
		for _, e := range r.entries {
			if !e.loaded {
				continue
			}
			for _, ex := range e.cand.Manifest.Exports {
				if ex.Name == imp.Name && manifest.CheckRequirement(imp.Requirement, ex.Version) == nil {
					met = true
				}
			}
		}
		if !met {
			return fmt.Errorf("capsule %s: required import %s %s is not met by any loaded capsule", id, imp.Name, imp.Requirement)
		}
	}
	return nil
}

// load builds, loads and registers one capsule; the caller holds ops (or,
// in a boot, the boot does). The outcome is recorded whatever it is.
func (r *Runtime) load(ctx context.Context, c *Candidate, f EngineFactory) (err error) {
	id := c.ID()
	m := c.Manifest
	r.mu.Lock()
	prev := r.entries[id]
	r.mu.Unlock()
	if prev != nil && prev.loaded {
		return fmt.Errorf("runtime: load %s: already loaded", id)
	}
	e := &entry{cand: c, factory: f}
	defer func() {
		if err != nil {
			err = fmt.Errorf("runtime: load %s: %w", id, err)
			e.err = err
		}
		r.record(e)
		r.audited(audit.KindCapsuleLoaded, c, err)
	}()
	surface, discard, err := r.build(ctx, e)
	if err != nil {
		return err
	}
	if err := r.register(id, m, surface, e.comp, e); err != nil {
		discard()
		return err
	}
	// A service publishes: it starts once the capsule's ACL is registered.
	e.comp.Start()
	r.log.Debug("capsule loaded", "capsule", id, "engines", e.comp.Engines(), "tools", e.tools)
	return nil
}

// build makes e's capsule ready to serve without registering it: checks,
// host, engines loaded and ready, tools known. It fills e.host, e.comp and
// e.tools, and returns the surface its engines add and discard, which
// unloads the engines and closes the host if the capsule is not used after
// all; on an error it has discarded them itself.
func (r *Runtime) build(ctx context.Context, e *entry) (surface capsule.Surface, discard func(), err error) {
	c, m := e.cand, e.cand.Manifest
	id := c.ID()
	if slices.Contains(r.opts.Reserved, id) {
		return surface, nil, fmt.Errorf("capsule id %q is reserved", id)
	}
	if err := r.toolsFree(id, toolNames(m, capsule.Surface{})); err != nil {
		return surface, nil, err
	}
	if !c.Builtin() && c.Dir != "" {
		if err := checkInstallDir(c.Dir, r.opts.Host.Workspace); err != nil {
			return surface, nil, err
		}
	}
	if err := r.approved(c, e.factory); err != nil {
		return surface, nil, err
	}
	// The manifest's own ACL is checked before any of its code starts;
	// what engines add, once they are ready (register).
	if err := plumbingGranted(m, aclOf(m, capsule.Surface{})); err != nil {
		return surface, nil, err
	}
	dir := c.Dir
	if dir == "" {
		dir = filepath.Join(r.opts.BuiltinDir, id)
	}
	env, err := resolveEnv(ctx, id, m, r.opts.Config(id), r.opts.AskEnv)
	if errors.Is(err, ErrEnvMissing) && r.opts.OnboardMissingEnv {
		r.log.Info("capsule loads without required [env] values; each principal is asked for them on first use", "capsule", id, "missing", err)
		env, err = presetEnv(m, r.opts.Config(id)), nil
	}
	if err != nil {
		return surface, nil, err
	}
	h, err := host.NewCapsule(r.opts.Host, m, dir, env)
	if err != nil {
		return surface, nil, err
	}
	if c.Builtin() {
		h.ActForAnyone()
	}
	e.host = h
	defer func() {
		if err != nil {
			h.Close()
		}
	}()
	factory := e.factory
	if factory == nil {
		factory = r.engineFactory(c, env)
	}
	if e.factory == nil || declaresStatic(m) {
		factory = withStatic(factory, m)
	}
	engines, err := factory(h)
	if err != nil {
		return surface, nil, err
	}
	comp := capsule.NewComposite(m, r.opts.CallDeadline, r.log, engines...)
	e.comp = comp
	if err := comp.Load(ctx); err != nil {
		return surface, nil, err
	}
	unload := func() {
		if uerr := comp.Unload(context.WithoutCancel(ctx)); uerr != nil {
			r.log.Warn("unload after a failed load", "capsule", id, "err", uerr)
		}
	}
	if err := comp.WaitReady(ctx, r.opts.ReadyTimeout); err != nil {
		unload()
		return surface, nil, err
	}
	surface = comp.Surface()
	e.tools = toolNames(m, surface)
	return surface, func() { unload(); h.Close() }, nil
}

// approved is the one place a load meets the operator's approval (boot,
// Load, the watcher's loads and reloads all come through load): a capsule
// the runtime reads from the capsules directory loads only within the
// grants approved at install. A built-in is part of the binary, and a
// capsule whose engines the caller builds (LoadWith) is the embedding
// program's own decision, as a built-in is; neither has a record.
func (r *Runtime) approved(c *Candidate, f EngineFactory) error {
	if c.Builtin() || f != nil {
		return nil
	}
	return grants.Check(r.opts.Approvals, c.Manifest)
}

// register checks that e's tools are free and registers the capsule with
// the dispatcher and the registry, as one step among concurrent loads.
func (r *Runtime) register(id string, m *manifest.Manifest, surface capsule.Surface, comp *capsule.Composite, e *entry) error {
	r.commit.Lock()
	defer r.commit.Unlock()
	if err := r.toolsFree(id, e.tools); err != nil {
		return err
	}
	acl := aclOf(m, surface)
	// What the engines added to the manifest's ACL is checked once they
	// are ready; the manifest's own part was checked before they started.
	if err := plumbingGranted(m, acl); err != nil {
		return err
	}
	if err := r.opts.Dispatcher.Register(acl, comp); err != nil {
		return err
	}
	if err := r.opts.Registry.Add(comp); err != nil {
		r.opts.Dispatcher.Unregister(id)
		return err
	}
	// Recorded before commit is released, so that the next load's
	// toolsFree sees these tools.
	e.loaded = true
	r.record(e)
	return nil
}

// toolsFree refuses tool names another loaded capsule already provides.
func (r *Runtime) toolsFree(id string, tools []string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, other := range r.order {
		e := r.entries[other]
		if other == id || !e.loaded {
			continue
		}
		for _, t := range tools {
			if slices.Contains(e.tools, t) {
				return fmt.Errorf("capsule %s cannot provide tool %s: capsule %s already provides it, and a tool keeps its provider (remove %s first to hand the tool over)", id, t, other, other)
			}
		}
	}
	return nil
}

func (r *Runtime) record(e *entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := e.cand.ID()
	if _, known := r.entries[id]; !known {
		r.order = append(r.order, id)
	}
	r.entries[id] = e
	// A capsule that has an entry is no longer only a discovery problem.
	r.problems = slices.DeleteFunc(r.problems, func(p Problem) bool { return p.Dir != "" && p.Dir == e.cand.Dir })
}

// Unload unregisters and unloads capsule id and forgets it.
func (r *Runtime) Unload(ctx context.Context, id string) error {
	r.ops.Lock()
	defer r.ops.Unlock()
	err := r.unload(ctx, id, true)
	if err == nil || !errors.Is(err, errNotKnown) {
		r.publishLoaded()
	}
	return err
}

var errNotKnown = errors.New("not loaded")

var errClosed = errors.New("the runtime is closed")

// emptySurface is the surface of a capsule not loaded yet.
var emptySurface = capsule.Surface{}

func (r *Runtime) unload(ctx context.Context, id string, forget bool) error {
	r.mu.Lock()
	e, ok := r.entries[id]
	if ok && forget {
		delete(r.entries, id)
		delete(r.restarts, id)
		r.order = slices.DeleteFunc(r.order, func(s string) bool { return s == id })
	}
	r.mu.Unlock()
	if !ok {
		return fmt.Errorf("runtime: unload %s: %w", id, errNotKnown)
	}
	if !e.loaded {
		return nil
	}
	r.opts.Registry.Remove(id)
	r.mu.Lock()
	e.loaded = false
	r.mu.Unlock()
	// Engines first, while the capsule may still publish: calls they end
	// send their failure replies. Then the dispatcher forgets it, telling
	// the callers of calls still queued that they will not run.
	err := e.comp.Unload(ctx)
	if forget && e.host != nil {
		r.mu.Lock()
		if r.departing == nil {
			r.departing = map[string]*host.Capsule{}
		}
		r.departing[id] = e.host
		r.mu.Unlock()
	}
	r.opts.Dispatcher.Unregister(id)
	if forget {
		r.mu.Lock()
		delete(r.departing, id)
		r.mu.Unlock()
	}
	if e.host != nil {
		e.host.Close()
		if forget {
			// Unloaded for good, not reloaded: its persistent
			// processes end too.
			e.host.Discard()
		}
	}
	if forget && r.opts.Forgotten != nil {
		r.opts.Forgotten(id)
	}
	if err != nil {
		return fmt.Errorf("runtime: unload %s: %w", id, err)
	}
	return nil
}

// Reload loads capsule id again from its directory (or its code, for a
// built-in), atomically: the running capsule serves until the new one is
// ready, then the new one takes its place in one step (replace.go). An
// installed capsule's new manifest is read first: one with errors, a
// different name, or one that asks for more than the operator approved is
// refused; a new one that fails to load or get ready is discarded. Either
// way the running capsule is kept and its status says why (List's Error).
func (r *Runtime) Reload(ctx context.Context, id string) error {
	r.ops.Lock()
	defer r.ops.Unlock()
	// Asked for from outside (a changed directory, SIGHUP): the health
	// monitor's count starts afresh.
	r.forgetRestarts(id)
	return r.reload(ctx, id)
}

// reload is Reload for a caller holding ops (the health monitor too).
func (r *Runtime) reload(ctx context.Context, id string) error {
	r.mu.Lock()
	e, ok := r.entries[id]
	r.mu.Unlock()
	if !ok {
		return fmt.Errorf("runtime: reload %s: %w", id, errNotKnown)
	}
	next := e.cand
	if !e.cand.Builtin() && e.factory == nil && e.cand.Dir != "" {
		c, err := r.nextCandidate(e)
		if err != nil {
			err = fmt.Errorf("runtime: reload %s refused, the running capsule is kept: %w", id, err)
			r.mu.Lock()
			e.err = err
			r.mu.Unlock()
			r.log.Warn("reload refused", "capsule", id, "err", err)
			r.audited(audit.KindCapsuleReloaded, e.cand, err)
			r.publishLoaded()
			return err
		}
		next = c
	}
	r.mu.Lock()
	loaded := e.loaded
	r.mu.Unlock()
	var err error
	if loaded {
		err = r.replace(ctx, e, next)
		r.audited(audit.KindCapsuleReloaded, next, err)
	} else {
		// Nothing serves: load it as a boot would.
		err = r.load(ctx, next, e.factory)
	}
	r.publishLoaded()
	return err
}

// nextCandidate reads the capsule's directory again and checks the new
// manifest, before the running capsule is unloaded, as load will.
func (r *Runtime) nextCandidate(e *entry) (*Candidate, error) {
	c, err := ReadCandidate(e.cand.Dir)
	if err != nil {
		return nil, err
	}
	if c.ID() != e.cand.ID() {
		return nil, fmt.Errorf("the package was renamed to %s; remove the capsule and install it again", c.ID())
	}
	if err := r.approved(c, e.factory); err != nil {
		return nil, err
	}
	return c, nil
}

// Close stops the watcher and unloads every capsule, last loaded first.
func (r *Runtime) Close(ctx context.Context) {
	r.stopHealth()
	r.stopWatch()
	r.stopBoot()
	r.ops.Lock()
	defer r.ops.Unlock()
	r.mu.Lock()
	r.closed = true
	ids := slices.Clone(r.order)
	r.mu.Unlock()
	for i := len(ids) - 1; i >= 0; i-- {
		if err := r.unload(ctx, ids[i], true); err != nil {
			r.log.Warn("unload", "capsule", ids[i], "err", err)
		}
	}
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
