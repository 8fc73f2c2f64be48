package daemon

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/runtime"
	"github.com/astrid-go/astrid/internal/sessionmcp"
)

// ErrNotServing answers a query asked before the daemon serves (the uplink
// loads first, so a client can be quicker than the boot) or after it began
// to stop.
var ErrNotServing = errors.New("the daemon is not serving")

// Reporter answers the live queries of the daemon's socket (the uplink's
// query op, docs/uplink.md): the capsule list and the status, read from the
// running kernel when asked, each as the asker may see it (view.go). The
// daemon's command makes one, hands it to the uplink it builds and to Run
// (Options.Reporter), which attaches the kernel once it serves.
type Reporter struct {
	mu      sync.Mutex
	src     *source
	clients clients // the socket's, for the idle timer (idle.go)
}

// source is what a report is read from while the daemon serves.
type source struct {
	k     *kernel.Kernel
	base  Status
	turns *turns
	idle  *idleClock // nil: no idle timer armed
}

func (r *Reporter) attach(s *source) {
	r.mu.Lock()
	r.src = s
	r.mu.Unlock()
}

func (r *Reporter) source() (*source, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.src == nil {
		return nil, ErrNotServing
	}
	return r.src, nil
}

// Kernel is the running kernel, for the queries the daemon's command
// answers from it (the standing approvals); ErrNotServing before it serves
// and once it stops.
func (r *Reporter) Kernel() (*kernel.Kernel, error) {
	src, err := r.source()
	if err != nil {
		return nil, err
	}
	return src.k, nil
}

// Viewer is who asks: the principal its connection acts as, and whether
// its uid is the daemon owner's.
type Viewer struct {
	Principal string
	Owner     bool
}

// SocketTraffic is one principal's use of the daemon's socket, as the
// uplink counts it.
type SocketTraffic struct {
	Clients  int
	BytesIn  uint64
	BytesOut uint64
}

// Capsules is the capsule list (runtime.List, as `astrid capsule list`
// prints it in-process) as v may see it.
func (r *Reporter) Capsules(v Viewer) ([]runtime.Status, error) {
	src, err := r.source()
	if err != nil {
		return nil, err
	}
	return capsulesFor(v, src.k.Runtime.List()), nil
}

// Status is the daemon's status now, with the socket's clients and bytes
// (socket: every principal's, from the uplink), as v may see it.
func (r *Reporter) Status(v Viewer, socket map[string]SocketTraffic) (Status, error) {
	src, err := r.source()
	if err != nil {
		return Status{}, err
	}
	s := snapshot(src.k, src.base, src.turns.Running())
	if src.idle != nil {
		s.Idle = src.idle.status()
	}
	addTraffic(&s, socket)
	src.turns.usage(&s)
	return statusFor(v, s, src.turns.RunningFor(v.Principal)), nil
}

// addTraffic puts the socket's figures into s: the clients connected, and
// each principal's clients and bytes beside its CPU.
func addTraffic(s *Status, socket map[string]SocketTraffic) {
	for p, t := range socket {
		s.Clients += t.Clients
		u := s.Principals[p]
		u.Clients, u.BytesIn, u.BytesOut = t.Clients, t.BytesIn, t.BytesOut
		s.Principals[p] = u
	}
	s.Updated = time.Now().UTC()
}

// ErrNotOwner refuses a change to the daemon asked by a uid that is not its
// owner's.
var ErrNotOwner = errors.New("only the daemon owner's uid may load capsules")

// Load loads installed capsule id now, or reloads it (runtime.LoadInstalled:
// what the watcher would do once its files settle), and returns its status
// afterwards: `astrid capsule install` and `approve` ask it of a running
// daemon, so they return once the capsule serves or say why it does not.
// Only the owner may: installing writes the owner's $ASTRID_HOME. ctx
// bounds the wait (each load is bounded by the runtime's ready timeout).
func (r *Reporter) Load(ctx context.Context, v Viewer, id string) (runtime.Status, error) {
	if !v.Owner {
		return runtime.Status{}, ErrNotOwner
	}
	src, err := r.source()
	if err != nil {
		return runtime.Status{}, err
	}
	st, _ := src.k.Runtime.LoadInstalled(ctx, id)
	return st, nil
}

// AttachMCP loads a session's own MCP servers bound to request scope for
// principal (kernel.AttachMCP): the uplink's attach_mcp op.
func (r *Reporter) AttachMCP(ctx context.Context, principal string, scope uint64, servers []sessionmcp.Server) ([]string, error) {
	src, err := r.source()
	if err != nil {
		return nil, err
	}
	return src.k.AttachMCP(ctx, principal, scope, servers)
}
