package runtime

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkHealthScan is one round of the health monitor over 100 ready
// capsules, what an idle daemon pays once a second (healthCheckEvery)
// whatever happens: it must stay far below a millisecond.
func BenchmarkHealthScan(b *testing.B) {
	f := newFixture(b, nil, Engines{})
	for i := range 100 {
		id := fmt.Sprintf("ready-%03d", i)
		f.install(id, contextCapsule(id, "notes"))
	}
	if err := f.rt.Boot(context.Background()); err != nil {
		b.Fatal(err)
	}
	f.rt.policy = HealthPolicy{MaxRestarts: 5, Backoff: time.Second, MaxBackoff: time.Minute}
	ctx, now := context.Background(), time.Now()
	b.ResetTimer()
	for b.Loop() {
		now = now.Add(time.Second)
		f.rt.checkHealth(ctx, now)
	}
}
