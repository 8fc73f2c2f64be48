package audit

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"sync/atomic"
	"testing"
)

// BenchmarkAppendConcurrent is the throughput the issue asks for (100,000
// entries a minute, 1,667 a second): 64 appenders at once, each waiting
// for its entry to be written (signed and synced by the sealer, group
// commit), over four principals' chains. It reports entries a second and
// how many entries shared an fsync.
//
//	GOMAXPROCS=2 go test -run '^$' -bench AppendConcurrent -benchtime 100000x ./internal/audit/
func BenchmarkAppendConcurrent(b *testing.B) {
	dir, key := b.TempDir(), newKey(b)
	l, err := Open(Options{Dir: dir, Key: key})
	if err != nil {
		b.Fatal(err)
	}
	var n atomic.Int64
	b.SetParallelism(32) // × GOMAXPROCS appenders
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			e := Entry{Principal: fmt.Sprintf("p%d", i%4), Kind: KindToolEnded, Capsule: "astrid-capsule-fs", Subject: "read_file", Outcome: "ok",
				Detail: map[string]string{"call_id": fmt.Sprintf("call_%d", i), "args_sha256": Genesis, "result_sha256": Genesis}}
			if err := l.Append(context.Background(), e); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(float64(b.N)/float64(l.syncs.Load()), "entries/fsync")
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkAppendOne is one appender waiting for each entry to be
// written.
func BenchmarkAppendOne(b *testing.B) {
	dir, key := b.TempDir(), newKey(b)
	l, err := Open(Options{Dir: dir, Key: key})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	e := Entry{Principal: "default", Kind: KindToolEnded, Subject: "read_file", Outcome: "ok", Detail: map[string]string{"result_sha256": Genesis}}
	for b.Loop() {
		if err := l.Append(context.Background(), e); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSign is the ed25519 signature a seal carries, alone.
func BenchmarkSign(b *testing.B) {
	key := newKey(b)
	body := make([]byte, 400)
	for b.Loop() {
		sealLine(key, body)
	}
}

// BenchmarkVerifyChain streams a chain of 100,000 entries through
// VerifyChain (what `astrid audit verify` does), reporting entries a
// second and the heap it kept (the chain is never held whole).
//
//	GOMAXPROCS=2 go test -run '^$' -bench VerifyChain -benchtime 3x ./internal/audit/
func BenchmarkVerifyChain(b *testing.B) {
	const n = 100_000
	dir, key := b.TempDir(), newKey(b)
	l, err := Open(Options{Dir: dir, Key: key, NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		if err := l.Enqueue(Entry{Principal: "default", Kind: KindToolEnded, Subject: "read_file", Outcome: "ok",
			Detail: map[string]string{"call_id": fmt.Sprintf("call_%d", i), "result_sha256": Genesis}}); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	pub := l.PublicKey()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		sum, err := VerifyChain(dir, "default", pub)
		if err != nil || sum.Entries-sum.Seals != n || sum.Unsealed() != 0 {
			b.Fatalf("%+v %v", sum, err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkToolCallEntries is what a tool call costs the chain on its hot
// path: the start queued, the end written (one write(2)); the sealer signs
// and syncs in the background.
//
//	GOMAXPROCS=2 go test -run '^$' -bench ToolCallEntries ./internal/audit/
func BenchmarkToolCallEntries(b *testing.B) {
	dir, key := b.TempDir(), newKey(b)
	l, err := Open(Options{Dir: dir, Key: key})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	start := Entry{Principal: "default", Kind: KindToolStarted, Capsule: "astrid-capsule-fs", Subject: "read_file",
		Detail: map[string]string{"call_id": "call_0123456789", "args_sha256": Genesis, "recorded_by": "astrid-capsule-router"}}
	end := Entry{Principal: "default", Kind: KindToolEnded, Capsule: "astrid-capsule-fs", Subject: "read_file", Outcome: "ok",
		Detail: map[string]string{"call_id": "call_0123456789", "result_sha256": Genesis, "recorded_by": "astrid-capsule-router"}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := l.Enqueue(start); err != nil {
			b.Fatal(err)
		}
		if err := l.Append(ctx, end); err != nil {
			b.Fatal(err)
		}
	}
}

// sealLine signs body and returns the full line, newline included.
func sealLine(key ed25519.PrivateKey, body []byte) []byte {
	sig := ed25519.Sign(key, append([]byte(entryContext), body...))
	return frame(body, base64.StdEncoding.EncodeToString(sig))
}
