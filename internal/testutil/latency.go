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
	b.ReportMetric(float64(Quantile(samples, 0.50).Nanoseconds()), prefix+"p50-ns")
	b.ReportMetric(float64(Quantile(samples, 0.99).Nanoseconds()), prefix+"p99-ns")
}

// Quantile returns the q-quantile (0 ≤ q ≤ 1) of samples, which it leaves
// unsorted; zero when there are none.
func Quantile(samples []time.Duration, q float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
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

// maxTurnSamples bounds the latencies Interleave keeps per side.
const maxTurnSamples = 1 << 20

// Interleave runs two implementations of one call taking turns call by
// call, which of the pair goes first alternating, after warmup calls of
// each: a drift of the machine then falls on both sides alike, which it
// does not when one side's counts all run before the other's. It reports
// as ReportTurns does. A failed call fails the benchmark.
func Interleave(b *testing.B, warmup int, ours, peer string, oursCall, peerCall func() error) {
	sides := [2]func() error{oursCall, peerCall}
	for range warmup {
		for _, call := range sides {
			if err := call(); err != nil {
				b.Fatal(err)
			}
		}
	}
	var lat [2][]time.Duration
	var total [2]time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		for k := range 2 {
			side := (i + k) % 2
			t0 := time.Now()
			if err := sides[side](); err != nil {
				b.Fatal(err)
			}
			d := time.Since(t0)
			total[side] += d
			if len(lat[side]) < maxTurnSamples {
				lat[side] = append(lat[side], d)
			}
		}
	}
	b.StopTimer()
	ReportTurns(b, ours, peer, total, b.N, lat)
}

// ReportTurns reports a benchmark in which two implementations took turns
// call by call: each side's mean over calls and its p50 (from lat), under
// "<name>-ns" and "<name>-p50-ns", and ours over the peer's as
// "ratio-mean" and "ratio-p50".
func ReportTurns(b *testing.B, ours, peer string, total [2]time.Duration, calls int, lat [2][]time.Duration) {
	meanOurs, meanPeer := float64(total[0].Nanoseconds())/float64(calls), float64(total[1].Nanoseconds())/float64(calls)
	b.ReportMetric(meanOurs, ours+"-ns")
	b.ReportMetric(meanPeer, peer+"-ns")
	b.ReportMetric(meanOurs/meanPeer, "ratio-mean")
	p50Ours, p50Peer := float64(Quantile(lat[0], 0.5)), float64(Quantile(lat[1], 0.5))
	b.ReportMetric(p50Ours, ours+"-p50-ns")
	b.ReportMetric(p50Peer, peer+"-p50-ns")
	b.ReportMetric(p50Ours/p50Peer, "ratio-p50")
}
