package wasm

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/ledger"
	"github.com/astrid-go/astrid/sdk"
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
	inst, err := f.eng.newInstance(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer inst.close()
	fn := inst.mod.ExportedFunction("raw_noop")
	handler := f.eng.index["noop"]
	var stack [1]uint64
	var rec []byte
	ours := func() {
		if _, err := f.eng.Invoke(ctx, noopInv); err != nil {
			b.Fatal(err)
		}
	}
	raw := func() {
		rec = sdk.EncodeInvocation(rec[:0], handler, noopInv)
		inst.mod.Memory().Write(inst.records.ptr, rec)
		stack[0] = uint64(len(rec))
		if err := fn.CallWithStack(ctx, stack[:]); err != nil {
			b.Fatal(err)
		}
	}
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
	p50 := func(s []time.Duration) float64 {
		s = slices.Clone(s)
		slices.Sort(s)
		return float64(s[len(s)/2].Nanoseconds())
	}
	meanOurs, meanRaw := float64(total[0].Nanoseconds())/float64(b.N), float64(total[1].Nanoseconds())/float64(b.N)
	b.ReportMetric(meanOurs, "abi-ns")
	b.ReportMetric(meanRaw, "raw-ns")
	b.ReportMetric(meanOurs/meanRaw, "ratio-mean")
	b.ReportMetric(p50(lat[0]), "abi-p50-ns")
	b.ReportMetric(p50(lat[1]), "raw-p50-ns")
	b.ReportMetric(p50(lat[0])/p50(lat[1]), "ratio-p50")
}
