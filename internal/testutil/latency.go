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
