package proc

import (
	"log/slog"
	"sync"
)

// Instance is the processes of one loaded capsule instance: its running
// process calls (at most MaxRunsPerCapsule, killed when it closes) and
// its background processes, held in the kernel's Background so that a
// persistent one outlives the instance.
type Instance struct {
	id  string
	log *slog.Logger
	bg  *Background
	// ownBackground: bg is this instance's alone, and ends with it.
	ownBackground bool

	// slots bounds the running process calls; runs are those calls'
	// children, killed when the instance closes.
	slots  procSlots
	mu     sync.Mutex
	runs   map[*run]bool
	closed bool
}

// NewInstance returns the processes of capsule id's new instance, its
// background processes held in bg; nil bg gives the instance a registry
// of its own that ends with it (tests).
func NewInstance(id string, log *slog.Logger, bg *Background) *Instance {
	if log == nil {
		log = slog.Default()
	}
	in := &Instance{id: id, log: log, bg: bg, slots: procSlots{n: make(chan struct{}, MaxRunsPerCapsule)}, runs: map[*run]bool{}}
	if bg == nil {
		in.bg, in.ownBackground = NewBackground(log), true
	}
	return in
}

// addRun records r as a child of the instance until done is called; a run
// added after Close is killed at once.
func (in *Instance) addRun(r *run) (done func()) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		r.kill()
	}
	in.runs[r] = true
	return func() {
		in.mu.Lock()
		delete(in.runs, r)
		in.mu.Unlock()
	}
}

// isClosed reports whether Close has run.
func (in *Instance) isClosed() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.closed
}

// Close kills the instance's process calls' children and ends its
// non-persistent background processes (all of them when its registry is
// its own); it returns once they are gone. The capsule calls it as it
// unloads or reloads.
func (in *Instance) Close() {
	in.mu.Lock()
	in.closed = true
	for r := range in.runs {
		r.kill()
	}
	in.mu.Unlock()
	if in.ownBackground {
		in.bg.Close()
	} else {
		in.bg.endInstance(in)
	}
}

// Discard ends what the capsule leaves behind when it is unloaded for good
// rather than reloaded: its persistent background processes. Call it
// after Close.
func (in *Instance) Discard() {
	in.bg.endCapsule(in.id)
}
