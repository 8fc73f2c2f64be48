package proc

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os/exec"
	"sync"
	"time"

	"github.com/astrid-go/astrid/hostapi"
)

// Background is the kernel's registry of background processes
// (hostapi.Process's ProcessSpawn). It outlives capsule instances, so
// that a persistent process survives a reload of its capsule and the new
// instance finds it by the same id; everything in it ends when the kernel
// stops (Close).
type Background struct {
	log *slog.Logger

	mu     sync.Mutex
	procs  map[string]*bgProc
	closed bool
}

// NewBackground returns an empty registry.
func NewBackground(log *slog.Logger) *Background {
	if log == nil {
		log = slog.Default()
	}
	return &Background{log: log, procs: map[string]*bgProc{}}
}

// bgProc is one background process.
type bgProc struct {
	id         string
	capsule    string    // the capsule id: what owns it across instances
	principal  string    // who spawned it: the only one who may read or kill it
	instance   *Instance // the instance a non-persistent one dies with (nil when persistent)
	persistent bool
	program    string

	run            *run
	stdout, stderr *logRing
	// end asks for a graceful end (SIGINT, grace, SIGKILL); supervise
	// returns and finished closes once nothing of the process remains.
	end      context.CancelFunc
	finished chan struct{}

	// Set before finished closes; read after.
	exitCode int
	signal   string
	ended    ended
	killed   bool // ProcessKill, an unload or the kernel's stop ended it
	timedOut bool
}

// newBackgroundID is an unguessable id; guessing one would gain nothing
// (lookups check the owner), but it keeps ids from telling anything.
func newBackgroundID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "bg-" + hex.EncodeToString(b[:])
}

// reserve records p (not started yet) if its capsule holds fewer than
// MaxBackgroundProcesses; false when full or closed.
func (b *Background) reserve(p *bgProc) (ok bool, closed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false, true
	}
	n := 0
	for _, q := range b.procs {
		if q.capsule == p.capsule {
			n++
		}
	}
	if n >= hostapi.MaxBackgroundProcesses {
		return false, false
	}
	b.procs[p.id] = p
	return true, false
}

// drop forgets p.
func (b *Background) drop(p *bgProc) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.procs[p.id] == p {
		delete(b.procs, p.id)
	}
}

// lookup finds id for its owner; another's id is as unknown as a made-up
// one, so it tells nothing.
func (b *Background) lookup(capsule, principal, id string) (*bgProc, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.procs[id]
	if !ok || p.capsule != capsule || p.principal != principal || p.run == nil {
		return nil, false
	}
	return p, true
}

// killWhere SIGKILLs, at once, every process match selects and waits until
// nothing of them remains; they are forgotten.
func (b *Background) killWhere(match func(*bgProc) bool) {
	b.mu.Lock()
	var victims []*bgProc
	var runs []*run
	for id, p := range b.procs {
		if match(p) {
			victims = append(victims, p)
			delete(b.procs, id)
			// One still starting has no run yet: its spawn sees it
			// gone from the registry and kills it.
			if p.run != nil {
				runs = append(runs, p.run)
			}
		}
	}
	b.mu.Unlock()
	for _, r := range runs {
		r.kill()
	}
	for _, p := range victims {
		<-p.finished
	}
}

// endInstance ends the non-persistent processes capsule instance in
// spawned (it unloads or reloads).
func (b *Background) endInstance(in *Instance) {
	b.killWhere(func(p *bgProc) bool { return p.instance == in && !p.persistent })
}

// endCapsule ends every process of capsule id (it is unloaded for good).
func (b *Background) endCapsule(id string) {
	b.killWhere(func(p *bgProc) bool { return p.capsule == id })
}

// Close ends every background process and refuses new ones: the kernel
// stops. It returns once none remains.
func (b *Background) Close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.killWhere(func(*bgProc) bool { return true })
}

// Spawn starts cmd, confined by cf and prepared by Command, as a
// background process of the instance for principal (hostapi.Process's
// ProcessSpawn; the caller checked a persistent one's grant): held in the
// kernel's Background under an unguessable id, its output kept in bounded
// rings, ended by its Timeout, ProcessKill, its instance's Close (unless
// persistent), Discard or the kernel's stop.
func (in *Instance) Spawn(op string, req hostapi.ProcessSpawnRequest, principal string, cmd *exec.Cmd, cf *Confined) (hostapi.ProcessHandle, error) {
	bg := in.bg
	p := &bgProc{
		id: newBackgroundID(), capsule: in.id, principal: principal,
		persistent: req.Persistent, program: req.Program,
		stdout: newLogRing(hostapi.MaxProcessLogBuffer), stderr: newLogRing(hostapi.MaxProcessLogBuffer),
		finished: make(chan struct{}),
	}
	if !p.persistent {
		p.instance = in
	}
	switch ok, closed := bg.reserve(p); {
	case closed:
		cf.Done()
		return hostapi.ProcessHandle{}, hostapi.Errorf(hostapi.CodeUnavailable, op, "the kernel is stopping")
	case !ok:
		cf.Done()
		return hostapi.ProcessHandle{}, hostapi.Errorf(hostapi.CodeRateLimited, op, "the capsule already holds %d background processes; read one to its end or kill one", hostapi.MaxBackgroundProcesses)
	}
	cmd.Stdin = bytes.NewReader(req.Stdin)
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	r, err := startTracked(cmd, cf, "background:"+p.id, in.id, in.log)
	if err != nil {
		bg.drop(p)
		close(p.finished)
		if hostapi.CodeOf(err) == hostapi.CodeNotSupported {
			return hostapi.ProcessHandle{}, err
		}
		return hostapi.ProcessHandle{}, hostapi.Errorf(hostapi.CodeIO, op, "start %s: %v", req.Program, err)
	}
	r.every = backgroundMonitorEvery
	ctx, end := context.WithCancel(context.Background())
	if req.Timeout > 0 {
		ctx, end = context.WithTimeout(context.Background(), req.Timeout)
	}
	bg.mu.Lock()
	p.run, p.end = r, end
	// The instance may have unloaded (or the kernel stopped) while the
	// child started: it was taken out of the registry then, or is
	// closed now (Close marks it before it ends its processes), and the
	// child dies at once.
	gone := bg.procs[p.id] != p
	if !gone && !p.persistent && in.isClosed() {
		delete(bg.procs, p.id)
		gone = true
	}
	bg.mu.Unlock()
	if gone {
		r.kill()
	}
	go p.supervise(ctx)
	in.log.Info("background process started", "id", p.id, "program", req.Program, "principal", p.principal, "persistent", p.persistent)
	return hostapi.ProcessHandle{ID: p.id, Persistent: p.persistent}, nil
}

// backgroundMonitorEvery is how often a background process's process count
// is checked: it lives long, so less often than a call's run.
const backgroundMonitorEvery = 250 * time.Millisecond

// supervise runs until nothing of the process remains and records how it
// ended.
func (p *bgProc) supervise(ctx context.Context) {
	defer close(p.finished)
	defer p.end()
	e := p.run.supervise(ctx, hostapi.ProcessGrace, maxDescendants)
	p.ended = e
	p.exitCode, p.signal = exitStatus(p.run.cmd.ProcessState)
	switch {
	case e.unloaded:
		p.killed = true
	case e.ctxErr != nil:
		p.timedOut = ctx.Err() == context.DeadlineExceeded
		p.killed = !p.timedOut
	}
}

// Logs reads the unread output of principal's background process id
// (hostapi.Process's ProcessLogs); a read of one that ended is its last,
// and forgets it.
func (in *Instance) Logs(op, principal, id string) (hostapi.ProcessLogs, error) {
	p, err := in.background(op, principal, id)
	if err != nil {
		return hostapi.ProcessLogs{}, err
	}
	select {
	case <-p.finished:
		// It ended: this read is its last; the id is collected.
		in.bg.drop(p)
		return p.logs(false), nil
	default:
		return p.logs(true), nil
	}
}

// Kill ends principal's background process id (SIGINT, the grace,
// SIGKILL) and returns its last output (hostapi.Process's ProcessKill).
func (in *Instance) Kill(op, principal, id string) (hostapi.ProcessLogs, error) {
	p, err := in.background(op, principal, id)
	if err != nil {
		return hostapi.ProcessLogs{}, err
	}
	// The end goes on if the call is cancelled meanwhile: it is bounded
	// by the grace, and a half-killed process would be worse.
	p.end()
	<-p.finished
	in.bg.drop(p)
	return p.logs(false), nil
}

// background finds id for the capsule and principal.
func (in *Instance) background(op, principal, id string) (*bgProc, error) {
	p, ok := in.bg.lookup(in.id, principal, id)
	if !ok {
		return nil, hostapi.Errorf(hostapi.CodeNotFound, op, "no background process %q of this capsule and principal", clip(id, 64))
	}
	return p, nil
}

// logs reads p's unread output; when it is no longer running, with how it
// ended (finished must be closed).
func (p *bgProc) logs(running bool) hostapi.ProcessLogs {
	var l hostapi.ProcessLogs
	l.Stdout, l.StdoutDropped, l.StdoutBytes = p.stdout.read()
	l.Stderr, l.StderrDropped, l.StderrBytes = p.stderr.read()
	l.Running = running
	if !running {
		l.ExitCode, l.Signal = p.exitCode, p.signal
		l.Killed, l.TimedOut, l.OverLimit = p.killed, p.timedOut, p.ended.overLimit
	}
	return l
}

// clip cuts s to n bytes for an error message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
