package bus

import (
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/astrid-go/astrid/ipc"
)

// fakeClock hands out strictly increasing instants so tests can assert
// stamping without reading the wall clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newTestBus(t *testing.T, opts Options) *Bus {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	b := New(opts)
	t.Cleanup(b.Close)
	return b
}

func env(topic, principal string) *ipc.Envelope {
	return &ipc.Envelope{Topic: topic, Principal: principal, SourceID: "test", Payload: json.RawMessage(`{"type":"custom"}`)}
}

// envSized returns an envelope whose Size is exactly size bytes.
func envSized(t *testing.T, topic, principal string, size int) *ipc.Envelope {
	t.Helper()
	e := &ipc.Envelope{Topic: topic, Principal: principal, SourceID: "test"}
	pad := size - e.Size()
	if pad < 2 {
		t.Fatalf("envSized: size %d below the minimum %d", size, e.Size()+2)
	}
	payload := make([]byte, pad)
	payload[0], payload[pad-1] = '"', '"'
	for i := 1; i < pad-1; i++ {
		payload[i] = 'x'
	}
	e.Payload = payload
	if e.Size() != size {
		t.Fatalf("envSized: got %d, want %d", e.Size(), size)
	}
	return e
}

func subscribe(t *testing.T, b *Bus, spec RouteSpec) *Route {
	t.Helper()
	r, err := b.Subscribe(spec)
	if err != nil {
		t.Fatalf("Subscribe(%+v): %v", spec, err)
	}
	return r
}

func publish(t *testing.T, b *Bus, e *ipc.Envelope) int {
	t.Helper()
	n, err := b.Publish(e)
	if err != nil {
		t.Fatalf("Publish(%s): %v", e.Topic, err)
	}
	return n
}

// drain takes everything queued on r without blocking.
func drain(r *Route) []Delivery {
	var out []Delivery
	for {
		d, ok := r.TryRecv()
		if !ok {
			return out
		}
		out = append(out, d)
	}
}

func principals(ds []Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Envelope.Principal
	}
	return out
}
