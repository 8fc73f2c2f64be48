package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/astrid-go/astrid/internal/atomicfile"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/kernel"
)

// DefaultTurnGrace bounds how long a shutdown waits for the final responses
// of the turns it cancelled (agentclient waits as long for one).
const DefaultTurnGrace = 2 * time.Second

// Options configure a daemon.
type Options struct {
	// Home is $ASTRID_HOME, already made (config.Home). Required.
	Home string
	// Workspace is the directory the tools work on. Required.
	Workspace string
	Config    config.Config
	// Builtins are the capsules linked into the binary (the product's and
	// the daemon-only ones, such as the CLI uplink), in load order.
	Builtins []kernel.Builtin
	// Frontends are the identities the product's frontends act under; the
	// daemon adds its own (ACL).
	Frontends      []dispatch.CapsuleACL
	ConfigFallback map[string]map[string]string
	// WasmCache is kernel.Options.WasmCache.
	WasmCache string
	// Console, when set, gets the log as text besides the JSON log file (a
	// daemon in the foreground: its terminal).
	Console io.Writer
	// Reload asks for every installed capsule to be reloaded (SIGHUP).
	Reload <-chan struct{}
	// AdminHandlers are mounted on the admin server beside the web view
	// (pattern → handler, http.ServeMux syntax: "/metrics"), behind its
	// token, Host and Origin checks; unused when [admin] is disabled.
	AdminHandlers map[string]http.Handler
	// Ready, when set, is called once the daemon serves (its pid file is
	// written), with its kernel (tests drive turns through it).
	Ready func(k *kernel.Kernel)
	// Reporter, when set, answers the socket's queries once the daemon
	// serves (the uplink built with it asks it).
	Reporter *Reporter
	// StartedBy names the command that started the daemon by itself
	// ("chat"; empty: started on purpose, astrid start or astrid daemon).
	// Only such a daemon has an idle timer: with IdleExit > 0 it stops
	// once it has had no client connected (Reporter.Clients) and no turn
	// running for IdleExit ([daemon] idle_exit).
	StartedBy      string
	IdleExit       time.Duration
	StatusInterval time.Duration
	LogMaxBytes    int64
	LogKeep        int
	TurnGrace      time.Duration
}

// Run runs the daemon until ctx ends, then shuts it down: running turns
// cancelled and answered (within TurnGrace), capsules unloaded in reverse
// load order, the store closed, the run files removed and the lock
// released. An error before the kernel serves is returned at once: another
// daemon holds the home (*RunningError), the home is not writable, or the
// kernel did not boot.
func Run(ctx context.Context, opts Options) (err error) {
	if opts.StatusInterval <= 0 {
		opts.StatusInterval = DefaultStatusInterval
	}
	if opts.TurnGrace <= 0 {
		opts.TurnGrace = DefaultTurnGrace
	}
	p := PathsOf(opts.Home)
	l, err := acquire(opts.Home, p)
	if err != nil {
		return err
	}
	defer func() {
		if rerr := l.release(); rerr != nil && err == nil {
			err = fmt.Errorf("daemon: release lock: %w", rerr)
		}
	}()
	stale := cleanStale(p)
	logFile, err := openRotating(p.Log, opts.LogMaxBytes, opts.LogKeep)
	if err != nil {
		return homeError(opts.Home, err)
	}
	defer logFile.Close()
	// A daemon's log is its only record: info at least (start, stop,
	// reloads), whatever a one-shot command's level is.
	log := newLogger(logFile, opts.Console, min(opts.Config.SlogLevel(), slog.LevelInfo))
	// Deferred steps run last registered first: turn tracker, kernel
	// (capsules unloaded in reverse load order, store closed), run files,
	// log file, lock.
	defer removeRunFiles(p, log)
	if len(stale) > 0 {
		log.Info("removed files a daemon that did not shut down left behind", "files", stale)
	}
	log.Info("daemon starting", "pid", os.Getpid(), "home", opts.Home, "workspace", opts.Workspace)
	started := time.Now().UTC()
	frontends := append(append([]dispatch.CapsuleACL(nil), opts.Frontends...), ACL())
	k, err := kernel.Boot(ctx, kernel.Options{
		Home: opts.Home, Workspace: opts.Workspace, Config: opts.Config, Logger: log,
		Builtins: opts.Builtins, Frontends: frontends,
		ConfigFallback: opts.ConfigFallback, WatchCapsules: true, WasmCache: opts.WasmCache,
		// People come and go: a value a capsule needs is asked of
		// each principal when it is used (host env.go).
		OnboardMissingEnv: true,
	})
	if err != nil {
		log.Error("daemon did not start", "err", err)
		return homeError(opts.Home, err)
	}
	defer k.Close()
	tr, err := startTurns(k.Frontend(), log)
	if err != nil {
		return fmt.Errorf("daemon: turn tracker: %w", err)
	}
	defer tr.close()
	defer startAdmin(k, opts, frontends, p, log)()
	base := Status{Pid: os.Getpid(), Home: opts.Home, Workspace: opts.Workspace, Sandbox: kernel.SandboxState(opts.Config.Sandbox), Started: started}
	var idle *idleClock
	if opts.StartedBy != "" && opts.IdleExit > 0 {
		idle = &idleClock{after: opts.IdleExit, startedBy: opts.StartedBy, ready: time.Now(), rep: opts.Reporter, turns: tr}
	}
	status := func() {
		s := snapshot(k, base, tr.Running())
		if idle != nil {
			s.Idle = idle.status()
		}
		if err := writeStatus(p.Status, s); err != nil {
			log.Warn("status file not written", "err", err)
		}
	}
	status()
	if opts.Reporter != nil {
		opts.Reporter.attach(&source{k: k, base: base, turns: tr, idle: idle})
		// Detached before the tracker closes and the kernel unloads.
		defer opts.Reporter.attach(nil)
	}
	// The pid file is the readiness signal: written last, once the kernel
	// serves, and removed first at shutdown.
	if err := atomicfile.Write(p.Pid, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		return homeError(opts.Home, err)
	}
	log.Info("daemon ready", "pid", os.Getpid(), "boot_ms", time.Since(started).Milliseconds(), "socket", p.Socket)
	if opts.Ready != nil {
		opts.Ready(k)
	}
	tick := time.NewTicker(opts.StatusInterval)
	defer tick.Stop()
	var idleTick <-chan time.Time
	if idle != nil {
		t := time.NewTicker(idle.poll())
		defer t.Stop()
		idleTick = t.C
		log.Info("idle exit armed: the daemon stops after this long with no client connected and no turn running", "idle_exit", opts.IdleExit.String(), "started_by", opts.StartedBy)
	}
	for {
		select {
		case <-ctx.Done():
			shutdown(k, tr, p, log, opts.TurnGrace)
			return nil
		case <-idleTick:
			if at, ok := idle.since(); ok && time.Since(at) >= idle.after {
				log.Info("daemon idle: no client connected and no turn running for [daemon] idle_exit; it was started by astrid "+opts.StartedBy+", so it stops",
					"idle_for", time.Since(at).Round(time.Millisecond).String(), "idle_exit", opts.IdleExit.String(), "started_by", opts.StartedBy)
				shutdown(k, tr, p, log, opts.TurnGrace)
				return nil
			}
		case <-opts.Reload:
			reload(ctx, k, log)
			status()
		case <-tick.C:
			status()
		}
	}
}

// shutdown cancels the running turns and waits for their answers; the
// deferred steps of Run then unload the capsules and close the store.
func shutdown(k *kernel.Kernel, tr *turns, p Paths, log *slog.Logger, grace time.Duration) {
	log.Info("daemon stopping", "turns", tr.Running())
	// The pid file goes first: from now on the daemon is not ready.
	if err := os.Remove(p.Pid); err != nil && !errors.Is(err, os.ErrNotExist) {
		log.Warn("pid file not removed", "err", err)
	}
	if n, unanswered := tr.cancelAll(grace); n > 0 {
		log.Info("running turns cancelled", "turns", n, "unanswered", unanswered)
		// The final responses are published; let their frontends' routes
		// hand them over before the kernel closes the routes.
		if left := drainRoutes(k, grace); left > 0 {
			log.Warn("messages still queued for their receivers at shutdown", "messages", left)
		}
		// A receiver that has taken a final response still checks it came
		// from the agent (agentclient asks who intercepts user.v1.prompt),
		// which stops being true once the agent unloads: give it a moment.
		time.Sleep(answerSettle)
	}
}

// drainRoutes waits, up to limit, until no bus route but the daemon's own
// holds a message its receiver has not taken, and returns how many are
// left.
func drainRoutes(k *kernel.Kernel, limit time.Duration) int {
	deadline := time.Now().Add(limit)
	for {
		queued := 0
		for _, r := range k.Bus.Stats().Routes {
			if r.Owner != ClientID {
				queued += r.QueuedMessages
			}
		}
		if queued == 0 || time.Now().After(deadline) {
			return queued
		}
		time.Sleep(drainPoll)
	}
}

// answerSettle is how long a shutdown lets frontends act on the final
// responses they have taken before the capsules unload.
const answerSettle = 100 * time.Millisecond

// drainPoll is how often drainRoutes looks at the routes.
const drainPoll = 5 * time.Millisecond

// reload reloads every installed capsule (the built-ins are the binary's:
// a new binary needs a restart) and loads new ones, as the watcher does
// for each changed directory, at once.
func reload(ctx context.Context, k *kernel.Kernel, log *slog.Logger) {
	log.Info("reload requested")
	for _, res := range k.Runtime.Rescan(ctx) {
		if res.Err != nil {
			log.Warn("capsule not reloaded", "capsule", res.ID, "err", res.Err)
		} else {
			log.Info("capsule reloaded", "capsule", res.ID, "action", res.Action)
		}
	}
}

func removeRunFiles(p Paths, log *slog.Logger) {
	for _, f := range []string{p.Pid, p.Status, p.Socket} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			log.Warn("run file not removed", "file", f, "err", err)
		}
	}
	log.Info("daemon stopped")
}

// newLogger logs JSON to the file and, when console is set, text to it.
func newLogger(file io.Writer, console io.Writer, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	h := slog.Handler(slog.NewJSONHandler(file, opts))
	if console != nil {
		h = slog.NewMultiHandler(h, slog.NewTextHandler(console, opts))
	}
	return slog.New(h)
}
