package sdktest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/astrid-go/astrid/capsules/router"
	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/commandclient"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/egress"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/mcpserve"
	"github.com/astrid-go/astrid/internal/registryclient"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
	"github.com/astrid-go/astrid/sdk"
)

// Capsule is a capsule under test: its Capsule.toml and its code.
type Capsule struct {
	Manifest []byte
	New      func() *sdk.Capsule
	// Config holds the capsule's [env] values, stored before boot as
	// `astrid capsule env set` stores them. A key left unset takes the
	// manifest's default; a required key (no default) left unset fails
	// the boot, as it fails a load (internal/runtime: resolveEnv).
	Config map[string]string
	// KV seeds the capsule's KV before boot: principal → key → value, as
	// an earlier run (or an older version of the capsule) left it.
	KV map[string]map[string]string
	// Files, for a capsule without code (New nil), are the files installed
	// beside its Capsule.toml in $ASTRID_HOME/capsules/<id>/ (relative
	// name → text), so a static-only capsule ([[context_file]], [[skill]])
	// is loaded as an operator's install would be, with the static engine.
	Files map[string]string
}

// Kernel is a running in-memory kernel with the router and the capsules
// under test loaded. It is closed when the test ends.
type Kernel struct {
	t testing.TB
	k *kernel.Kernel
	// Workspace is the directory `*` grants resolve to; tests put files
	// there.
	Workspace string
	// Timeout bounds each call; 30 s by default.
	Timeout time.Duration
	logs    *logBuffer
	// home is $ASTRID_HOME, cfg the operator config and egress the
	// capsules' egress options (nil: the kernel's), kept for Restart.
	home   string
	cfg    config.Config
	egress *egress.Options
}

// New boots a kernel with the router and capsules, failing the test if any
// capsule does not load.
func New(t testing.TB, capsules ...Capsule) *Kernel {
	t.Helper()
	return bootFresh(t, testConfig(), capsules)
}

// bootFresh is New with the operator config cfg, on a fresh home and
// workspace.
func bootFresh(t testing.TB, cfg config.Config, capsules []Capsule) *Kernel {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return boot(t, cfg, t.TempDir(), ws, capsules)
}

// boot boots with config cfg on a given home and workspace.
func boot(t testing.TB, cfg config.Config, home, ws string, capsules []Capsule) *Kernel {
	t.Helper()
	return bootNet(t, cfg, nil, home, ws, capsules)
}

// bootNet is boot with the capsules' egress options (nil: the kernel's,
// from cfg).
func bootNet(t testing.TB, cfg config.Config, eg *egress.Options, home, ws string, capsules []Capsule) *Kernel {
	t.Helper()
	builtins := []kernel.Builtin{{Manifest: router.Manifest, New: router.New}}
	for _, c := range capsules {
		if c.New == nil {
			if err := install(home, c); err != nil {
				t.Fatalf("sdktest: install: %v", err)
			}
			continue
		}
		builtins = append(builtins, kernel.Builtin{Manifest: c.Manifest, New: c.New})
	}
	if err := storeConfig(home, capsules); err != nil {
		t.Fatalf("sdktest: config: %v", err)
	}
	logs := &logBuffer{}
	logger := slog.New(slog.NewTextHandler(io.MultiWriter(os.Stderr, logs), &slog.HandlerOptions{Level: slog.LevelWarn}))
	if eg != nil {
		withLog := *eg
		withLog.Logger = logger
		eg = &withLog
	}
	k, err := kernel.Boot(context.Background(), kernel.Options{
		Home: home, Workspace: ws, Config: cfg, Logger: logger, Builtins: builtins, Egress: eg,
		Frontends: []dispatch.CapsuleACL{toolclient.ACL(), llmClientACL(), sessionClientACL(), agentclient.ACL(), promptClientACL(), approverACL(), registryclient.ACL(), commandclient.ACL(), mcpserve.ACL()},
	})
	if err != nil {
		t.Fatalf("sdktest: boot: %v", err)
	}
	t.Cleanup(k.Close)
	return &Kernel{t: t, k: k, Workspace: ws, Timeout: 30 * time.Second, logs: logs, home: home, cfg: cfg, egress: eg}
}

// CallTool calls a tool as the default principal and returns its result.
// args is marshalled to JSON (a json.RawMessage or string is used as is).
func (k *Kernel) CallTool(name string, args any) ipc.ToolCallResult {
	return k.CallToolAs(ipc.DefaultPrincipal, name, args)
}

// CallToolAs calls a tool for principal.
func (k *Kernel) CallToolAs(principal, name string, args any) ipc.ToolCallResult {
	k.t.Helper()
	var raw json.RawMessage
	switch a := args.(type) {
	case json.RawMessage:
		raw = a
	case string:
		raw = json.RawMessage(a)
	default:
		b, err := json.Marshal(args)
		if err != nil {
			k.t.Fatalf("sdktest: arguments: %v", err)
		}
		raw = b
	}
	res, err := toolclient.CallTool(context.Background(), k.k.Frontend(), principal, name, raw, k.Timeout)
	if err != nil {
		k.t.Fatalf("sdktest: call %s: %v", name, err)
	}
	return res
}

// Tool is one described tool.
type Tool = toolclient.ToolInfo

// Tools runs the describe protocol and returns every tool, failing the test
// if a capsule does not answer.
func (k *Kernel) Tools() []Tool {
	k.t.Helper()
	tools, missing, err := toolclient.ListTools(context.Background(), k.k.Frontend(), ipc.DefaultPrincipal, k.Timeout)
	if err != nil {
		k.t.Fatalf("sdktest: describe: %v", err)
	}
	if len(missing) > 0 {
		k.t.Fatalf("sdktest: capsules did not answer describe: %v", missing)
	}
	return tools
}

// storeConfig writes each capsule's Config and KV seed into home's state
// store, under the capsule's id (its manifest's package name).
func storeConfig(home string, capsules []Capsule) error {
	var st *store.Store
	for _, c := range capsules {
		if len(c.Config) == 0 && len(c.KV) == 0 {
			continue
		}
		m, diags := manifest.Parse(c.Manifest, "Capsule.toml", "")
		if m == nil || diags.HasErrors() {
			return fmt.Errorf("manifest does not parse: %v", diags)
		}
		if st == nil {
			var err error
			if st, err = store.Open(config.Layout(home).State, store.Options{}); err != nil {
				return err
			}
			defer st.Close()
		}
		for k, v := range c.Config {
			if err := st.Config(m.ID()).Set(k, []byte(v)); err != nil {
				return fmt.Errorf("capsule %s: %s: %w", m.ID(), k, err)
			}
		}
		for principal, kv := range c.KV {
			if err := seedKV(st.KV(principal, m.ID()), kv); err != nil {
				return fmt.Errorf("capsule %s: KV %s: %w", m.ID(), principal, err)
			}
		}
	}
	return nil
}

// seedKV writes kv into ns from several goroutines, so that the store's
// group commit makes a large seed (thousands of keys) one commit per batch,
// not one per key.
func seedKV(ns *store.KV, kv map[string]string) error {
	const writers = 32
	keys := make(chan string)
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range keys {
				if err := ns.Set(k, []byte(kv[k])); err != nil {
					errs <- fmt.Errorf("%s: %w", k, err)
					for range keys { // drain, so the sender ends
					}
					return
				}
			}
		}()
	}
	for k := range kv {
		keys <- k
	}
	close(keys)
	wg.Wait()
	close(errs)
	return <-errs
}

// testConfig is the operator config a test kernel starts from: the
// defaults, without the per-principal CPU budget. A capsule test asserts
// what the capsule does, and the race detector (5–10× the CPU) on a loaded
// machine would otherwise refuse a test's prompt for a budget that no
// production kernel is measured against; the budget has its own tests
// (internal/ledger, internal/kernel).
func testConfig() config.Config {
	cfg := config.Default()
	cfg.Limits.CPUBudgetMsPerSec = 0
	return cfg
}

// NewWithPublishRate is New with every (capsule, principal)'s publish
// budget set to bytesPerSec with a burst of burst bytes, for a test of what
// a capsule does when the budget refuses it (a stream that must slow down,
// say). RateLimited tells whether the budget was reached.
func NewWithPublishRate(t testing.TB, bytesPerSec, burst int, capsules ...Capsule) *Kernel {
	t.Helper()
	cfg := testConfig()
	cfg.Limits.RateBytesPerSec, cfg.Limits.RateBurstBytes = bytesPerSec, burst
	return bootFresh(t, cfg, capsules)
}

// RateLimited is how many publishes the publish budget has refused so far.
func (k *Kernel) RateLimited() uint64 { return k.k.Dispatcher.Stats().RateLimited }

// Home is the kernel's $ASTRID_HOME: a test puts the operator's files
// there (skills/, say) and boots again with Restart.
func (k *Kernel) Home() string { return k.home }
