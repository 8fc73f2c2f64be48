package netio

import (
	"log/slog"
	"net"
	"sync"

	"github.com/astrid-go/astrid/hostapi"
)

// handle is one open stream or listener of a capsule.
type handle struct {
	principal string // who opened it: only their calls may use it
	conn      net.Conn
	ln        net.Listener
	// cleanup removes a unix listener's socket file once the listener is
	// closed (nil otherwise).
	cleanup func()
}

func (h *handle) close() error {
	var err error
	if h.conn != nil {
		err = h.conn.Close()
	}
	if h.ln != nil {
		err = h.ln.Close()
		if h.cleanup != nil {
			h.cleanup()
		}
	}
	return err
}

// Table holds a capsule's open handles. Numbers are never reused within
// a capsule, so a stale number names nothing rather than someone's new
// stream.
type Table struct {
	mu       sync.Mutex
	closed   bool
	next     hostapi.NetHandle
	reserved int // slots taken by opens in progress
	limit    int // open handles allowed; 0 is hostapi.MaxNetHandles
	open     map[hostapi.NetHandle]*handle
	log      *slog.Logger
}

// NewTable returns an empty table that holds at most limit handles
// (hostapi.MaxNetHandles when 0), logging to log.
func NewTable(limit int, log *slog.Logger) *Table {
	if log == nil {
		log = slog.Default()
	}
	return &Table{limit: limit, log: log}
}

// reserve takes a slot for a handle about to be opened; release gives it
// back if the open fails, add fills it.
func (t *Table) reserve(op string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return hostapi.Errorf(hostapi.CodeClosed, op, "the capsule has unloaded")
	}
	limit := t.limit
	if limit == 0 {
		limit = hostapi.MaxNetHandles
	}
	if len(t.open)+t.reserved >= limit {
		return hostapi.Errorf(hostapi.CodeRateLimited, op, "the capsule already holds %d streams and listeners (close one first)", limit)
	}
	t.reserved++
	return nil
}

func (t *Table) release() {
	t.mu.Lock()
	t.reserved--
	t.mu.Unlock()
}

// add fills a reserved slot with h and returns its number. After unload it
// closes h instead: nothing the capsule opened outlives it.
func (t *Table) add(op string, h *handle) (hostapi.NetHandle, error) {
	t.mu.Lock()
	t.reserved--
	if t.closed {
		t.mu.Unlock()
		_ = h.close()
		return 0, hostapi.Errorf(hostapi.CodeClosed, op, "the capsule has unloaded")
	}
	if t.open == nil {
		t.open = map[hostapi.NetHandle]*handle{}
	}
	t.next++
	id := t.next
	t.open[id] = h
	t.mu.Unlock()
	return id, nil
}

// get finds id for principal.
func (t *Table) get(op string, id hostapi.NetHandle, principal string) (*handle, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.find(op, id, principal)
}

// find looks id up for principal. A handle of another principal is
// reported as absent: a call learns nothing about streams it does not own.
// t.mu must be held.
func (t *Table) find(op string, id hostapi.NetHandle, principal string) (*handle, error) {
	if t.closed {
		return nil, hostapi.Errorf(hostapi.CodeClosed, op, "the capsule has unloaded")
	}
	h, ok := t.open[id]
	if !ok || h.principal != principal {
		return nil, hostapi.Errorf(hostapi.CodeNotFound, op, "no open handle %d", id)
	}
	return h, nil
}

// remove takes id out of the table for principal, in one step, so two
// closes of one handle cannot both succeed.
func (t *Table) remove(op string, id hostapi.NetHandle, principal string) (*handle, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h, err := t.find(op, id, principal)
	if err == nil {
		delete(t.open, id)
	}
	return h, err
}

// CloseAll closes every handle; later opens are refused. The capsule calls
// it as it unloads.
func (t *Table) CloseAll() {
	t.mu.Lock()
	t.closed = true
	open := t.open
	t.open = nil
	t.mu.Unlock()
	for _, h := range open {
		_ = h.close()
	}
}

// Len is how many handles are open.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.open)
}
