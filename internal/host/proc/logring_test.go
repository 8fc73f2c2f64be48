package proc

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestLogRingMatchesAModel: random writes and reads against the obvious
// model (keep the newest max unread bytes, count the rest).
func TestLogRingMatchesAModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		max := 1 + rng.IntN(64)
		r := newLogRing(max)
		var model []byte
		var dropped, total int64
		next := byte(0)
		for step := range 50 {
			if rng.IntN(4) == 0 {
				out, d, tot := r.read()
				if !bytes.Equal(out, model) || d != dropped || tot != total {
					t.Fatalf("round %d step %d (max %d): read %v dropped %d total %d, want %v %d %d", round, step, max, out, d, tot, model, dropped, total)
				}
				model, dropped = nil, 0
				continue
			}
			p := make([]byte, rng.IntN(3*max))
			for i := range p {
				p[i] = next
				next++
			}
			_, _ = r.Write(p)
			total += int64(len(p))
			model = append(model, p...)
			if over := len(model) - max; over > 0 {
				model = model[over:]
				dropped += int64(over)
			}
			if len(r.buf) > max {
				t.Fatalf("the ring grew to %d past %d", len(r.buf), max)
			}
		}
	}
}
