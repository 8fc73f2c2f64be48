package webview

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/ipc"
)

// fakeSub is a subscription the test feeds.
type fakeSub struct {
	ch     chan bus.Delivery
	closed chan struct{}
	once   sync.Once
}

func newFakeSub() *fakeSub {
	return &fakeSub{ch: make(chan bus.Delivery, 1024), closed: make(chan struct{})}
}

func (s *fakeSub) Recv(ctx context.Context) (bus.Delivery, error) {
	select {
	case d := <-s.ch:
		return d, nil
	case <-ctx.Done():
		return bus.Delivery{}, ctx.Err()
	case <-s.closed:
		return bus.Delivery{}, bus.ErrClosed
	}
}

func (s *fakeSub) Close() { s.once.Do(func() { close(s.closed) }) }

func (s *fakeSub) isClosed() bool {
	select {
	case <-s.closed:
		return true
	default:
		return false
	}
}

// fakeSource is a synthetic kernel: nodes and counters as given, an
// observer and turn routes the test feeds.
type fakeSource struct {
	nodes    []Node
	counters Counters
	turns    *fakeSub

	mu       sync.Mutex
	rings    []*fakeSub
	observed atomic.Int32
}

func newFakeSource(nodes []Node) *fakeSource {
	return &fakeSource{nodes: nodes, turns: newFakeSub()}
}

func (f *fakeSource) Capsules() []Node   { return f.nodes }
func (f *fakeSource) Counters() Counters { return f.counters }
func (f *fakeSource) TurnEvents() ([]bus.Subscription, error) {
	return []bus.Subscription{f.turns}, nil
}

func (f *fakeSource) Observe() bus.Subscription {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := newFakeSub()
	f.rings = append(f.rings, r)
	f.observed.Add(1)
	return r
}

// ring is the observer opened last, or nil.
func (f *fakeSource) ring() *fakeSub {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.rings) == 0 {
		return nil
	}
	return f.rings[len(f.rings)-1]
}

// openRings counts the observers not closed.
func (f *fakeSource) openRings() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, r := range f.rings {
		if !r.isClosed() {
			n++
		}
	}
	return n
}

// Hostile names: markup and script in what the view shows as text.
const (
	htmlCapsule = `<img src=x onerror="document.body.dataset.pwned='capsule'">`
	htmlTopic   = `<script>document.body.dataset.pwned='topic'</script>`
	htmlGrant   = `fs_read = ["<b onmouseover=alert(1)>bold</b>"]`
)

// syntheticNodes are n capsules in a ring, each publishing its own topic
// and subscribing to its next and seventh neighbours' (2n edges), the
// first one named with markup, and a frontend that prompts.
func syntheticNodes(n int) []Node {
	nodes := make([]Node, 0, n+1)
	for i := range n {
		id := fmt.Sprintf("syn-capsule-%03d", i)
		if i == 0 {
			id = htmlCapsule
		}
		nodes = append(nodes, Node{
			ID: id, Kind: "capsule", State: "ready", Engines: []string{"wasm", "static"},
			Publish: []string{fmt.Sprintf("syn.c%d.out", i)},
			Subscribe: []Subscription{
				{Pattern: fmt.Sprintf("syn.c%d.out", (i+1)%n)},
				{Pattern: fmt.Sprintf("syn.c%d.*", (i+7)%n)},
			},
			Grants: []string{htmlGrant, "net = [\"example.com\"]"},
		})
	}
	return append(nodes, Node{ID: "syn-frontend", Kind: "frontend", Publish: []string{ipc.UserPromptTopic}})
}

// syntheticTopics are n topic names, the first one markup.
func syntheticTopics(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("syn.topic%04d.event", i)
	}
	out[0] = htmlTopic
	return out
}

// publish feeds the observer an envelope on each topic, from source.
func (s *fakeSub) publish(source string, topics ...string) {
	for _, t := range topics {
		s.ch <- bus.Delivery{Envelope: &ipc.Envelope{Topic: t, SourceID: source}}
	}
}

// deliveryOf wraps an envelope as a route delivers it.
func deliveryOf(e *ipc.Envelope) bus.Delivery { return bus.Delivery{Envelope: e} }
