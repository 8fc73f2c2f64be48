package memory

import (
	"slices"
	"testing"
	"time"
)

var engines = []struct {
	name string
	new  func(testing.TB) engine
}{
	{"ours", newOurs},
	{"bleve", newBleve},
	{"sqlite-fts5", newFTS5},
}

// BenchmarkMemory indexes the corpus one note at a time, as remember does
// (index-s: all corpusNotes notes; µs/note), then runs the corpusQueries
// queries, each timed alone (p50-µs, p95-µs), and counts how often the
// note a query's three words came from is among the five results
// (recall@5). One op is all of it: run with -benchtime 1x.
func BenchmarkMemory(b *testing.B) {
	notes, qs := corpus(corpusNotes, corpusQueries)
	for _, e := range engines {
		b.Run(e.name, func(b *testing.B) {
			for b.Loop() {
				eng := e.new(b)
				start := time.Now()
				for i, n := range notes {
					if err := eng.add(i, n); err != nil {
						b.Fatal(err)
					}
				}
				indexed := time.Since(start)
				took := make([]time.Duration, 0, len(qs))
				found := 0
				for _, q := range qs {
					start := time.Now()
					hits, err := eng.search(q.words)
					took = append(took, time.Since(start))
					if err != nil {
						b.Fatal(err)
					}
					if len(hits) == 0 {
						b.Fatalf("%s found nothing for %v, words of note %d", e.name, q.words, q.note)
					}
					if slices.Contains(hits, q.note) {
						found++
					}
				}
				slices.Sort(took)
				b.ReportMetric(indexed.Seconds(), "index-s")
				b.ReportMetric(float64(indexed.Microseconds())/corpusNotes, "µs/note")
				b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(took[len(took)*95/100].Microseconds()), "p95-µs")
				b.ReportMetric(float64(found)/float64(len(qs)), "recall@5")
			}
		})
	}
}

// BenchmarkOursRoundTrip is a recall the capsule answers without reading
// its index (a query of stop words only) over one note: what of ours'
// query time is the tool call through the kernel, not the search.
func BenchmarkOursRoundTrip(b *testing.B) {
	eng := newOurs(b).(*ours)
	if err := eng.add(0, "one note"); err != nil {
		b.Fatal(err)
	}
	took := make([]time.Duration, 0, corpusQueries)
	for b.Loop() {
		took = took[:0]
		for range corpusQueries {
			start := time.Now()
			if res := eng.k.CallToolAs("alice", "recall", map[string]any{"query": "the of and", "limit": 5}); res.IsError {
				b.Fatal(res.Content)
			}
			took = append(took, time.Since(start))
		}
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
}
