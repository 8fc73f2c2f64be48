package wasm

import (
	"context"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/ledger"
	"github.com/astrid-go/astrid/internal/testutil"
)

// BenchmarkABIvsRawInterleaved is BenchmarkABINoop and BenchmarkRawNoop
// taking turns call by call in one run (which goes first alternating), on
// the same guest and runtime: the raw call's cost is bimodal on this VM for
// minutes at a time, and sequential counts can compare one mode with the
// other. Reported: each side's mean and p50, and the ratios ours ÷ raw.
//
//	GOMAXPROCS=2 go test -tags bench -run '^$' -bench ABIvsRawInterleaved -count 10 ./internal/engine/wasm/
func BenchmarkABIvsRawInterleaved(b *testing.B) {
	f := loadHostile(b, Options{Ledger: ledger.New(time.Hour)})
	ctx, cancel := context.WithTimeout(context.Background(), DefaultCallDeadline)
	defer cancel()
	ours := func() {
		if _, err := f.eng.Invoke(ctx, noopInv); err != nil {
			b.Fatal(err)
		}
	}
	raw := rawNoopCaller(b, ctx, f)
	sides := [2]func(){ours, raw}
	var lat [2][]time.Duration
	var total [2]time.Duration
	for range 1000 {
		ours()
		raw()
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		for k := range 2 {
			side := (i + k) % 2
			t0 := time.Now()
			sides[side]()
			d := time.Since(t0)
			total[side] += d
			if len(lat[side]) < 1<<16 {
				lat[side] = append(lat[side], d)
			}
		}
	}
	b.StopTimer()
	testutil.ReportTurns(b, "abi", "raw", total, b.N, lat)
}
