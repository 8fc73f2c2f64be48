package wasm

import (
	"context"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/abi"
	"github.com/astrid-go/astrid/internal/ledger"
	"github.com/astrid-go/astrid/ipc"
)

var noopInv = hostapi.Invocation{
	Handler: "noop", Pattern: "hostile.v1.noop", Topic: "hostile.v1.noop",
	SourceID: "bench", Principal: ipc.DefaultPrincipal, Payload: []byte(`{"call_id":"c1","tool_name":"x","arguments":{}}`),
}

// latencies keeps the last len(ring) samples of a closed loop, without
// allocating inside it, and reports their p50 and p99 (DESIGN §7).
type latencies struct {
	ring [1 << 16]time.Duration
	n    int
}

func (l *latencies) add(d time.Duration) {
	l.ring[l.n%len(l.ring)] = d
	l.n++
}

func (l *latencies) report(b *testing.B) {
	s := slices.Clone(l.ring[:min(l.n, len(l.ring))])
	if len(s) == 0 {
		return
	}
	slices.Sort(s)
	b.ReportMetric(float64(s[len(s)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(s[len(s)*99/100].Nanoseconds()), "p99-ns")
}

// BenchmarkABINoop is one handler call through the engine, as the
// composite makes it (a context with the capsule's deadline): ledger
// admission, pool checkout, invocation record copied in, astrid_invoke,
// verdict, ledger charge.
func BenchmarkABINoop(b *testing.B) {
	f := loadHostile(b, Options{Ledger: ledger.New(time.Hour)})
	ctx, cancel := context.WithTimeout(context.Background(), DefaultCallDeadline)
	defer cancel()
	lat := new(latencies)
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		if _, err := f.eng.Invoke(ctx, noopInv); err != nil {
			b.Fatal(err)
		}
		lat.add(time.Since(start))
	}
	lat.report(b)
}

// BenchmarkRawNoop is the peer: the same copy of the same record into the
// same guest's record buffer (the only copy of the record either path
// makes: astrid_invoke reads it in place), then a raw wazero call of an
// export that does nothing, with the same runtime config
// (WithCloseOnContextDone) and the same kind of context.
func BenchmarkRawNoop(b *testing.B) {
	f := loadHostile(b, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), DefaultCallDeadline)
	defer cancel()
	raw := rawNoopCaller(b, ctx, f)
	lat := new(latencies)
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		if err := raw(); err != nil {
			b.Fatal(err)
		}
		lat.add(time.Since(start))
	}
	lat.report(b)
}

// rawNoopCaller returns one raw call of raw_noop on an instance of its own
// (closed when the benchmark ends): noopInv's record written into the
// record buffer, then the export called with its length.
func rawNoopCaller(b *testing.B, ctx context.Context, f *fixture) func() error {
	inst, err := f.eng.newInstance(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(inst.close)
	fn := inst.mod.ExportedFunction("raw_noop")
	handler := f.eng.index["noop"]
	var stack [1]uint64
	var rec []byte
	return func() error {
		rec = abi.EncodeInvocation(rec[:0], handler, abiInvocation(noopInv))
		inst.mod.Memory().Write(inst.records.ptr, rec)
		stack[0] = uint64(len(rec))
		return fn.CallWithStack(ctx, stack[:])
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
	slices.Sort(samples)
	b.ReportMetric(float64(samples[len(samples)/2].Microseconds())/1000, "median-ms")
}

// BenchmarkIdleInstanceMemory reports one idle instance's linear memory
// and the host heap it holds besides it. Without a custom allocator wazero
// keeps linear memory on the Go heap, so the heap growth per instance is
// the total: linear memory plus its growth slack plus wazero's and our
// bookkeeping. (Adding the heap growth to the linear size counted the
// linear memory twice.)
func BenchmarkIdleInstanceMemory(b *testing.B) {
	f := loadHostile(b, Options{})
	ctx := context.Background()
	const n = 8
	var linear, total float64
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
		linear = float64(insts[0].memoryBytes())
		total = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / n
		for _, inst := range insts {
			inst.close()
		}
		if total < linear {
			b.Fatalf("heap grew %.0f bytes per instance, less than its %.0f bytes of linear memory: linear memory is no longer on the Go heap; measure it apart", total, linear)
		}
	}
	b.ReportMetric(linear/(1<<20), "linear-MiB")
	b.ReportMetric((total-linear)/(1<<20), "host-heap-MiB")
	b.ReportMetric(total/(1<<20), "total-MiB")
}
