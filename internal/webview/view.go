package webview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/astrid-go/astrid/internal/bus"
)

// Options configure a view.
type Options struct {
	Source Source
	// Notice is a warning the page shows above everything while it is
	// open: the kernel's, e.g. that processes run unconfined
	// ([sandbox] mode = "off"). Empty: none.
	Notice string
	// Interval is how often the rates, drops and turns are sampled and
	// sent to the event streams (default 1s).
	Interval time.Duration
	// ClientBuffer is how many ticks may wait for one event stream; a
	// stream that lets more pile up is dropped (default 16).
	ClientBuffer int
	// MaxClients bounds the event streams open at once (default 16).
	MaxClients int
	// WriteTimeout bounds each write to an event stream (default 10s): a
	// client that stops reading holds its goroutine no longer.
	WriteTimeout time.Duration
	// KeepTurns is how many ended turns are shown (default 50).
	KeepTurns int
	Logger    *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.ClientBuffer <= 0 {
		o.ClientBuffer = 16
	}
	if o.MaxClients <= 0 {
		o.MaxClients = 16
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	if o.KeepTurns <= 0 {
		o.KeepTurns = 50
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// View is the web view of one kernel: an http.Handler (routes.go) and the
// goroutines that follow the kernel for it.
type View struct {
	opts  Options
	src   Source
	log   *slog.Logger
	turns *recorder
	hub   *hub

	graphMu sync.Mutex
	graph   Graph

	flowMu   sync.Mutex // guards flow, lastTake and last
	flow     *flow      // nil while nobody watches
	lastTake time.Time
	// last are the rates of the last interval sampled: what a stream that
	// just connected and /api/state show, so that they do not cut the
	// interval short for everyone else.
	last struct {
		topics, sources []Rate
		lost            uint64
	}

	muxOnce sync.Once
	mux     *http.ServeMux

	subs []bus.Subscription
	stop context.CancelFunc
	wg   sync.WaitGroup
	once sync.Once
}

// Tick is what every event stream gets each interval, and /api/state
// answers.
type Tick struct {
	At         time.Time `json:"at"`
	IntervalMS int64     `json:"interval_ms"`
	// Graph is the graph's version: the page refetches it on a change.
	Graph    string   `json:"graph"`
	Counters Counters `json:"counters"`
	// Topics and Sources are the message rates by topic and by publisher
	// (empty until someone watches: the observer opens with the first
	// stream).
	Topics  []Rate `json:"topics"`
	Sources []Rate `json:"sources"`
	// Lost counts envelopes the observer ring overwrote before the view
	// counted them: the rates are a sample then.
	Lost  uint64 `json:"lost"`
	Turns Turns  `json:"turns"`
	// Streams and StreamsDropped count the event streams open and those
	// dropped for not reading.
	Streams        int    `json:"streams"`
	StreamsDropped uint64 `json:"streams_dropped"`
}

// New starts a view of opts.Source: it subscribes to the turn events at
// once and samples every Interval until Close.
func New(opts Options) (*View, error) {
	if opts.Source == nil {
		return nil, errors.New("webview: no Source")
	}
	opts = opts.withDefaults()
	v := &View{opts: opts, src: opts.Source, log: opts.Logger, turns: newRecorder(opts.KeepTurns), hub: newHub(opts.ClientBuffer, opts.MaxClients)}
	subs, err := v.src.TurnEvents()
	if err != nil {
		return nil, fmt.Errorf("webview: %w", err)
	}
	v.subs = subs
	ctx, stop := context.WithCancel(context.Background())
	v.stop = stop
	for _, s := range subs {
		v.wg.Add(1)
		go v.followTurns(ctx, s)
	}
	v.wg.Add(1)
	go v.sampleEvery(ctx)
	return v, nil
}

func (v *View) followTurns(ctx context.Context, s bus.Subscription) {
	defer v.wg.Done()
	for {
		d, err := s.Recv(ctx)
		if err != nil {
			return
		}
		if d.Lost > 0 {
			v.log.Info("web view lost turn events", "lost", d.Lost)
		}
		v.turns.observe(d.Envelope)
	}
}

func (v *View) sampleEvery(ctx context.Context) {
	defer v.wg.Done()
	t := time.NewTicker(v.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			v.sample()
		}
	}
}

// sample takes one tick and sends it to every stream. The observer ring
// is open exactly while a stream is: opened on the first tick with one,
// closed on the first tick without.
func (v *View) sample() {
	watched := v.hub.count() > 0
	if !watched {
		v.flowMu.Lock()
		if v.flow != nil {
			v.flow.close()
			v.flow = nil
			v.last.topics, v.last.sources, v.last.lost = nil, nil, 0
		}
		v.flowMu.Unlock()
		return
	}
	v.watch()
	msg, err := encodeTick(v.tick(true))
	if err != nil {
		v.log.Warn("web view tick not encoded", "err", err)
		return
	}
	v.hub.broadcast(msg)
}

// tick reads everything the page shows now. With take it ends the
// sampling interval (the sampler's tick); without, it shows the rates of
// the last one.
func (v *View) tick(take bool) Tick {
	t := Tick{
		At: time.Now().UTC(), IntervalMS: v.opts.Interval.Milliseconds(),
		Graph: v.currentGraph().Version, Counters: v.src.Counters(), Turns: v.turns.snapshot(),
		Topics: []Rate{}, Sources: []Rate{},
		Streams: v.hub.count(), StreamsDropped: v.hub.dropped.Load(),
	}
	if t.Counters.Drops == nil {
		t.Counters.Drops = []Drop{}
	}
	if t.Counters.Queues == nil {
		t.Counters.Queues = []Queue{}
	}
	v.flowMu.Lock()
	defer v.flowMu.Unlock()
	if take && v.flow != nil {
		now := time.Now()
		secs := max(now.Sub(v.lastTake).Seconds(), 1e-3)
		v.lastTake = now
		v.last.topics, v.last.sources, v.last.lost = v.flow.take(secs)
	}
	if v.last.topics != nil {
		t.Topics, t.Sources, t.Lost = v.last.topics, v.last.sources, v.last.lost
	}
	return t
}

// encodeTick is t as one server-sent event.
func encodeTick(t Tick) ([]byte, error) {
	data, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	return append(append([]byte("event: tick\ndata: "), data...), "\n\n"...), nil
}

// currentGraph is the graph of the capsules now, rebuilt only when they
// changed.
func (v *View) currentGraph() Graph {
	nodes := v.src.Capsules()
	ver := version(nodes)
	v.graphMu.Lock()
	defer v.graphMu.Unlock()
	if v.graph.Version != ver {
		v.graph = buildGraph(nodes)
	}
	return v.graph
}

// Close stops following the kernel and ends the event streams.
func (v *View) Close() {
	v.once.Do(func() {
		v.stop()
		for _, s := range v.subs {
			s.Close()
		}
		v.wg.Wait()
		v.flowMu.Lock()
		if v.flow != nil {
			v.flow.close()
			v.flow = nil
		}
		v.flowMu.Unlock()
		v.hub.closeAll()
	})
}
