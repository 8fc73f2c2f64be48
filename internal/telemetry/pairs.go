package telemetry

import (
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// kind is what a paired span stands for.
type kind uint8

const (
	kindTurn kind = iota
	kindTool
	kindProvider
	kindApproval
	numKinds
)

// maxOpen bounds the spans waiting for their closing event. A request whose
// answer never comes (a crashed capsule, a lost frontend) would otherwise
// hold its span forever; past the bound the oldest is ended as abandoned.
const maxOpen = 4096

// pairKey names an open span: its kind, the principal it acts for (so that
// one principal's events never end another's spans) and the id its request
// and answer share (a call id, a request id, a session and turn id).
type pairKey struct {
	kind      kind
	principal string
	id        string
}

type openSpan struct {
	span trace.Span
	seq  uint64 // order of opening, for eviction
}

// pairs is the table of spans opened by a request on the bus and ended by
// its answer.
type pairs struct {
	mu   sync.Mutex
	open map[pairKey]openSpan
	seq  uint64
	// count is the open spans of each kind, read without the lock so that
	// an answer topic is parsed only while a span of its kind is open.
	count [numKinds]atomic.Int32
}

func (p *pairs) init() { p.open = make(map[pairKey]openSpan) }

// pending reports whether any span of kind k is open.
func (p *pairs) pending(k kind) bool { return p.count[k].Load() > 0 }

// put records s under key; a span already there (a request id reused, a
// turn pre-empted on a session with no turn ids) is ended as replaced.
func (p *pairs) put(key pairKey, s trace.Span) {
	p.mu.Lock()
	var ended []trace.Span
	if old, ok := p.open[key]; ok {
		ended = append(ended, old.span)
		delete(p.open, key)
		p.count[key.kind].Add(-1)
	}
	if len(p.open) >= maxOpen {
		oldest, first := pairKey{}, true
		var min uint64
		for k, o := range p.open {
			if first || o.seq < min {
				oldest, min, first = k, o.seq, false
			}
		}
		ended = append(ended, p.open[oldest].span)
		delete(p.open, oldest)
		p.count[oldest.kind].Add(-1)
	}
	p.seq++
	p.open[key] = openSpan{span: s, seq: p.seq}
	p.count[key.kind].Add(1)
	p.mu.Unlock()
	for _, s := range ended {
		abandon(s, "no answer before another span took its place")
	}
}

// peek returns the span under key, leaving it open.
func (p *pairs) peek(key pairKey) (trace.Span, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	o, ok := p.open[key]
	return o.span, ok
}

// take removes and returns the span under key.
func (p *pairs) take(key pairKey) (trace.Span, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	o, ok := p.open[key]
	if ok {
		delete(p.open, key)
		p.count[key.kind].Add(-1)
	}
	return o.span, ok
}

// endAll ends every open span as abandoned for why.
func (p *pairs) endAll(why string) {
	p.mu.Lock()
	open := p.open
	p.open = make(map[pairKey]openSpan)
	for k := range p.count {
		p.count[k].Store(0)
	}
	p.mu.Unlock()
	for _, o := range open {
		abandon(o.span, why)
	}
}

func abandon(s trace.Span, why string) {
	s.SetStatus(codes.Error, "abandoned: "+why)
	s.End()
}
