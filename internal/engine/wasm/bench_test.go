package wasm

import (
	"context"
	"path/filepath"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

var noopInv = hostapi.Invocation{
	Handler: "noop", Pattern: "hostile.v1.noop", Topic: "hostile.v1.noop",
	SourceID: "bench", Principal: ipc.DefaultPrincipal, Payload: []byte(`{"call_id":"c1","tool_name":"x","arguments":{}}`),
}

// BenchmarkABINoop is one handler call through the engine: pool checkout,
// host call bound, invocation record copied in, astrid_invoke, verdict,
// ledger charge.
func BenchmarkABINoop(b *testing.B) {
	f := loadHostile(b, Options{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.eng.Invoke(ctx, noopInv); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRawNoop is the peer: the same copy of the same record into the
// same guest's memory, then a raw wazero call of an export that does
// nothing, with the same runtime config and a context with a deadline as
// the engine's calls have.
func BenchmarkRawNoop(b *testing.B) {
	f := loadHostile(b, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), DefaultCallDeadline)
	defer cancel()
	inst, err := f.eng.newInstance(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer inst.close()
	fn := inst.mod.ExportedFunction("raw_noop")
	var stack [1]uint64
	var rec []byte
	b.ReportAllocs()
	for b.Loop() {
		rec = sdk.EncodeInvocation(rec[:0], noopInv)
		inst.mod.Memory().Write(inst.scratchPtr, rec)
		stack[0] = uint64(len(rec))
		if err := fn.CallWithStack(ctx, stack[:]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkColdStart is a new runtime on a warm compilation cache loading
// a capsule to its first ready instance (read, hash, compile from cache,
// instantiate, _initialize).
func BenchmarkColdStart(b *testing.B) {
	built := guest(b, "testdata/hostile")
	h, _ := newHarness(b, &syncBuffer{})
	cache := filepath.Join(testCache, "compiled")
	warm := newRuntime(b, Options{CacheDir: cache}) // fills the cache once
	if _, err := h.load(b, warm, withComponent(hostileManifest(b), built), b.TempDir()); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var samples []time.Duration
	for b.Loop() {
		start := time.Now()
		rt, err := NewRuntime(ctx, Options{CacheDir: cache})
		if err != nil {
			b.Fatal(err)
		}
		m := withComponent(hostileManifest(b), built)
		e := newEngine(rt, m, m.ExecutableComponent(), nil)
		if err := e.load(ctx); err != nil {
			b.Fatal(err)
		}
		samples = append(samples, time.Since(start))
		_ = e.Unload(ctx)
		_ = rt.Close(ctx)
	}
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	b.ReportMetric(float64(samples[len(samples)/2].Microseconds())/1000, "median-ms")
}

// BenchmarkIdleInstanceMemory reports one idle instance's linear memory
// and the host heap it holds.
func BenchmarkIdleInstanceMemory(b *testing.B) {
	f := loadHostile(b, Options{})
	ctx := context.Background()
	const n = 8
	var linear uint64
	var heap float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		insts := make([]*instance, n)
		for i := range insts {
			inst, err := f.eng.newInstance(ctx)
			if err != nil {
				b.Fatal(err)
			}
			insts[i] = inst
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		linear = uint64(insts[0].memoryBytes())
		heap = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / n
		for _, inst := range insts {
			inst.close()
		}
	}
	b.ReportMetric(float64(linear)/(1<<20), "linear-MiB")
	b.ReportMetric(heap/(1<<20), "host-heap-MiB")
	b.ReportMetric(float64(linear)/(1<<20)+heap/(1<<20), "total-MiB")
}
