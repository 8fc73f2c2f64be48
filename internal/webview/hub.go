package webview

import (
	"sync"
	"sync/atomic"
)

// hub hands each tick to every event-stream client without ever waiting
// for one: a client whose buffer is full is dropped (its stream ends; the
// page reconnects), so a tab that stopped reading costs the view at most
// its buffer.
type hub struct {
	buffer, max int

	mu      sync.Mutex
	clients map[*client]struct{}
	dropped atomic.Uint64 // clients dropped for not reading
}

// client is one event stream's queue.
type client struct {
	ch   chan []byte
	gone chan struct{} // closed when the hub drops the client
}

func newHub(buffer, max int) *hub {
	return &hub{buffer: buffer, max: max, clients: map[*client]struct{}{}}
}

// join adds a client, or returns nil when max are connected.
func (h *hub) join() *client {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.clients) >= h.max {
		return nil
	}
	c := &client{ch: make(chan []byte, h.buffer), gone: make(chan struct{})}
	h.clients[c] = struct{}{}
	return c
}

// leave removes a client that ended by itself.
func (h *hub) leave(c *client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.clients, c)
}

// count is the number of clients connected.
func (h *hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.clients)
}

// broadcast queues msg for every client; a client with no room left is
// dropped. It never blocks.
func (h *hub) broadcast(msg []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.clients {
		select {
		case c.ch <- msg:
		default:
			delete(h.clients, c)
			close(c.gone)
			h.dropped.Add(1)
		}
	}
}

// closeAll ends every stream (the view is closing).
func (h *hub) closeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.clients {
		delete(h.clients, c)
		close(c.gone)
	}
}
