package bus

import (
	"log/slog"
	"time"
)

// Defaults from DESIGN §4b.
const (
	DefaultRouteBudget = 4 << 20
	DefaultMaxMessage  = 1 << 20
	DefaultRingSize    = 1024
	// DefaultQuantum is the DRR credit a principal earns per visit; upstream's
	// floor of 4 KiB. Small enough that a visit serves a handful of typical
	// messages, so a quiet principal waits at most one short round.
	DefaultQuantum = 512
)

// Options configures a Bus. The zero value gives DESIGN §4b's defaults.
type Options struct {
	// RouteBudget is the byte budget of each route, counted with
	// (*ipc.Envelope).Size over the messages it holds.
	RouteBudget int
	// MaxMessage is the largest envelope Publish admits. It is clamped to
	// RouteBudget so that every admitted message fits any route.
	MaxMessage int
	// RingSize is the capacity of each kernel observer ring.
	RingSize int
	// Quantum is the deficit-round-robin credit, in bytes, a principal's
	// queue earns each time a receiver visits it.
	Quantum int
	// Now stamps envelopes; tests inject a fake clock. The default reads the
	// wall clock through the monotonic one (see internal/clock).
	Now    func() time.Time
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.RouteBudget <= 0 {
		o.RouteBudget = DefaultRouteBudget
	}
	if o.MaxMessage <= 0 {
		o.MaxMessage = DefaultMaxMessage
	}
	if o.MaxMessage > o.RouteBudget {
		o.MaxMessage = o.RouteBudget
	}
	if o.RingSize <= 0 {
		o.RingSize = DefaultRingSize
	}
	if o.Quantum <= 0 {
		o.Quantum = DefaultQuantum
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}
