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
//	GOMAXPROCS=2 go test -run '^$' -bench ABIvsRawInterleaved -count 10 ./internal/engine/wasm/
func BenchmarkABIvsRawInterleaved(b *testing.B) {
	f := loadHostile(b, Options{Ledger: ledger.New(time.Hour)})
	ctx, cancel := context.WithTimeout(context.Background(), DefaultCallDeadline)
	defer cancel()
	ours := func() error {
		_, err := f.eng.Invoke(ctx, noopInv)
		return err
	}
	testutil.Interleave(b, 1000, "abi", "raw", ours, rawNoopCaller(b, ctx, f))
}
