package dispatch_test

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// interleavedBlock is how many messages one side publishes before the
// other takes its turn: long enough to reach a steady state (a multiple of
// the receivers' progress step, 256), short enough that a drift of the
// machine falls on both sides alike.
const interleavedBlock = 64 * 256

// BenchmarkPublishRoutedInterleaved is BenchmarkPublishRouted with the
// implementations taking turns in blocks of interleavedBlock messages in
// one run, instead of each running all its counts before the next starts:
// on a machine whose speed drifts by tens of percent over minutes, the
// sequential ratio compares two different machines. b.N is the messages
// per implementation; each side reports its ns/msg, and ratio is NATS's
// time per message over ours.
//
//	cd bench && GOMAXPROCS=2 go test -run '^$' -bench PublishRoutedInterleaved -count 10 ./dispatch/
func BenchmarkPublishRoutedInterleaved(b *testing.B) {
	for _, nonMatching := range []int{0, 500} {
		b.Run(fmt.Sprintf("nonmatching=%d", nonMatching), func(b *testing.B) {
			sides := make([]*interleavedSide, len(routedImpls))
			for i, impl := range routedImpls {
				s := &interleavedSide{name: impl.name}
				s.publish, s.check = impl.setup(b, nonMatching, s.delivered)
				sides[i] = s
			}
			b.SetBytes(int64(len(benchPayload)))
			b.ResetTimer()
			for done, turn := 0, 0; done < b.N; turn++ {
				n := min(interleavedBlock, b.N-done)
				n = (n + 255) &^ 255 // whole progress steps
				for k := range sides {
					s := sides[(turn+k)%len(sides)]
					s.run(b, n)
				}
				done += n
			}
			b.StopTimer()
			for _, s := range sides {
				if err := s.check(); err != nil {
					b.Fatalf("invalid run of %s: %v", s.name, err)
				}
				b.ReportMetric(float64(s.elapsed.Nanoseconds())/float64(s.sent), s.name+"-ns/msg")
			}
			b.ReportMetric((float64(sides[1].elapsed)/float64(sides[1].sent))/(float64(sides[0].elapsed)/float64(sides[0].sent)), "ratio")
		})
	}
}

// interleavedSide is one implementation's publisher and receiver in an
// interleaved run.
type interleavedSide struct {
	name     string
	publish  func()
	check    func() error
	count    int64        // the receiver's own count
	received atomic.Int64 // count, published every 256 deliveries
	sent     int64
	elapsed  time.Duration
}

func (s *interleavedSide) delivered() {
	s.count++
	if s.count&255 == 0 {
		s.received.Store(s.count)
	}
}

// run publishes n more messages (a multiple of 256) under the same window
// as BenchmarkPublishRouted and waits until the receiver has them all.
func (s *interleavedSide) run(b *testing.B, n int) {
	start := time.Now()
	base := s.sent
	for i := range int64(n) {
		if i&255 == 0 {
			for base+i-s.received.Load() > routedWindow {
				runtime.Gosched()
			}
		}
		s.publish()
	}
	s.sent += int64(n)
	for s.received.Load() < s.sent {
		if err := s.check(); err != nil {
			b.Fatalf("%s: %v", s.name, err)
		}
		runtime.Gosched()
	}
	s.elapsed += time.Since(start)
}
