package testutil

import (
	"slices"
	"testing"
	"time"
)

// ReportLatency reports the p50 and p99 of closed-loop latency samples as
// benchmark metrics (DESIGN §7), named prefix+"p50-ns" and prefix+"p99-ns".
func ReportLatency(b *testing.B, samples []time.Duration, prefix string) {
	if len(samples) == 0 {
		return
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	at := func(q float64) float64 { return float64(s[int(q*float64(len(s)-1))].Nanoseconds()) }
	b.ReportMetric(at(0.50), prefix+"p50-ns")
	b.ReportMetric(at(0.99), prefix+"p99-ns")
}

// ClosedLoop is DESIGN §7's latency benchmark: warmup calls first, then one
// call in flight at a time for b.N calls, each timed; it reports allocations
// and the p50/p99 of the calls. A failed call fails the benchmark.
func ClosedLoop(b *testing.B, warmup int, call func() error) {
	for range warmup {
		if err := call(); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		if err := call(); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	ReportLatency(b, lat, "")
}
