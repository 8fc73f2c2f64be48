package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/bus/natsbus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/ledger"
)

// New starts recording k's metrics and returns the handler that serves
// them in Prometheus's text format (or OpenMetrics, as the scraper asks).
// Call it once per kernel: each call adds an observer and its own registry.
func New(k *kernel.Kernel) http.Handler {
	reg := prometheus.NewRegistry()
	rec := newRecorder()
	reg.MustRegister(rec.collectors()...)
	reg.MustRegister(newStatsCollector(kernelSource{k}))
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	k.Dispatcher.AddObserver(rec)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		// A scrape that fails halfway still answers what it has.
		ErrorHandling:     promhttp.ContinueOnError,
		EnableOpenMetrics: true,
	})
}

// kernelSource reads a kernel's counters for the stats collector.
type kernelSource struct{ k *kernel.Kernel }

func (s kernelSource) busStats() bus.Stats             { return s.k.Bus.Stats() }
func (s kernelSource) dispatchStats() dispatch.Stats   { return s.k.Dispatcher.Stats() }
func (s kernelSource) ledger() map[string]ledger.Usage { return s.k.Ledger.Snapshot() }

func (s kernelSource) nats() *natsbus.Stats {
	tr := s.k.NATSTransport()
	if tr == nil {
		return nil
	}
	st := tr.Stats()
	return &st
}

func (s kernelSource) queued() map[string]int {
	out := map[string]int{}
	for _, c := range s.k.Registry.List() {
		id := c.ID()
		out[id] = s.k.Dispatcher.Queued(id)
	}
	return out
}
