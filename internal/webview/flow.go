package webview

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"github.com/astrid-go/astrid/internal/bus"
)

// Rate is how many events one topic (or one publisher) carried in the
// last interval, and since the view started counting.
type Rate struct {
	Name  string  `json:"name"`
	PerS  float64 `json:"per_s"`
	Total uint64  `json:"total"`
}

// Bounds on what the flow counter keeps, whatever the bus carries: the
// names past maxNames share one row.
const (
	maxNames  = 4096
	otherName = "(other)"
)

// flow counts the envelopes an observer ring shows, by topic and by
// publisher. It runs only while someone watches (view.sample opens and
// closes it): the ring costs each publish a push, and nothing else.
type flow struct {
	ring bus.Subscription
	stop context.CancelFunc
	done chan struct{}

	mu                   sync.Mutex
	topics, sources      map[string]uint64 // this interval
	topicTotal, srcTotal map[string]uint64
	lost                 uint64
}

func startFlow(ring bus.Subscription) *flow {
	ctx, stop := context.WithCancel(context.Background())
	f := &flow{
		ring: ring, stop: stop, done: make(chan struct{}),
		topics: map[string]uint64{}, sources: map[string]uint64{},
		topicTotal: map[string]uint64{}, srcTotal: map[string]uint64{},
	}
	go f.run(ctx)
	return f
}

func (f *flow) run(ctx context.Context) {
	defer close(f.done)
	for {
		d, err := f.ring.Recv(ctx)
		if err != nil {
			return
		}
		f.mu.Lock()
		f.lost += d.Lost
		count(f.topics, d.Envelope.Topic)
		count(f.sources, d.Envelope.SourceID)
		f.mu.Unlock()
	}
}

// count adds one to m[name], or to m[otherName] once m holds maxNames.
func count(m map[string]uint64, name string) {
	if _, ok := m[name]; !ok && len(m) >= maxNames {
		name = otherName
	}
	m[name]++
}

// take returns the interval's rates (seconds long), highest first, and
// the events the ring lost, and starts the next interval.
func (f *flow) take(seconds float64) (topics, sources []Rate, lost uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	topics = rates(f.topics, f.topicTotal, seconds)
	sources = rates(f.sources, f.srcTotal, seconds)
	clear(f.topics)
	clear(f.sources)
	return topics, sources, f.lost
}

// rates folds the interval's counts into the totals and lists every name
// counted so far, the busiest first. Lock must be held.
func rates(interval, total map[string]uint64, seconds float64) []Rate {
	// The interval's counts as the totals fold them: a name new past
	// maxNames counts in otherName's rate as in its total.
	folded := make(map[string]uint64, len(interval))
	for name, n := range interval {
		if _, ok := total[name]; !ok && len(total) >= maxNames {
			name = otherName
		}
		total[name] += n
		folded[name] += n
	}
	out := make([]Rate, 0, len(total))
	for name, t := range total {
		out = append(out, Rate{Name: name, PerS: float64(folded[name]) / seconds, Total: t})
	}
	slices.SortFunc(out, func(a, b Rate) int {
		if c := cmp.Compare(b.PerS, a.PerS); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Total, a.Total); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return out
}

// close closes the ring and waits for the counter to stop.
func (f *flow) close() {
	f.stop()
	f.ring.Close()
	<-f.done
}
