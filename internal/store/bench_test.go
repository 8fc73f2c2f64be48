package store

import (
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

func benchStore(b *testing.B) *Store {
	b.Helper()
	s, err := Open(filepath.Join(b.TempDir(), "state.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// BenchmarkKVSet measures one durable write by a lone writer: opening the
// file, a bbolt commit with its fsyncs, closing the file.
func BenchmarkKVSet(b *testing.B) {
	kv := benchStore(b).KV("default", "bench")
	value := make([]byte, 256)
	b.SetBytes(int64(len(value)))
	i := 0
	for b.Loop() {
		if err := kv.Set("key-"+strconv.Itoa(i%1024), value); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkKVSetParallel measures durable writes from 16 goroutines at once
// on two cores (b.SetParallelism), which share commits (DB.Batch): its ns/op against
// BenchmarkKVSet's is what batching saves.
func BenchmarkKVSetParallel(b *testing.B) {
	kv := benchStore(b).KV("default", "bench")
	value := make([]byte, 256)
	b.SetBytes(int64(len(value)))
	var next atomic.Int64
	b.SetParallelism(8) // × GOMAXPROCS goroutines
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := kv.Set("key-"+strconv.Itoa(int(next.Add(1)%1024)), value); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkKVGet measures a read of a 256-byte value among 1024 keys.
func BenchmarkKVGet(b *testing.B) {
	kv := benchStore(b).KV("default", "bench")
	value := make([]byte, 256)
	for i := range 1024 {
		if err := kv.Set("key-"+strconv.Itoa(i), value); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(value)))
	i := 0
	for b.Loop() {
		if _, ok, err := kv.Get("key-" + strconv.Itoa(i%1024)); !ok || err != nil {
			b.Fatal(ok, err)
		}
		i++
	}
}

// BenchmarkKVGetParallel measures concurrent readers (bbolt readers do not
// block each other).
func BenchmarkKVGetParallel(b *testing.B) {
	kv := benchStore(b).KV("default", "bench")
	if err := kv.Set("k", make([]byte, 256)); err != nil {
		b.Fatal(err)
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, ok, err := kv.Get("k"); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
}

// BenchmarkSecretGet measures a read plus AES-GCM open of a 64-byte secret.
func BenchmarkSecretGet(b *testing.B) {
	sec := benchStore(b).Secrets("bench")
	if err := sec.Set("API_KEY", make([]byte, 64)); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, ok, err := sec.Get("API_KEY"); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkKVSetContended measures durable writes from two Stores on one
// file, as two processes on one $ASTRID_HOME have (flock treats two opens
// in one process as two holders): each write may first wait for the other
// Store to let go of the file.
func BenchmarkKVSetContended(b *testing.B) {
	path := filepath.Join(b.TempDir(), "state.db")
	var kvs [2]*KV
	for i := range kvs {
		s, err := Open(path, Options{Timeout: time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close() })
		kvs[i] = s.KV("default", "bench")
	}
	value := make([]byte, 256)
	var next atomic.Int64
	var done [2]atomic.Int64
	b.SetParallelism(1) // one goroutine per Store on two cores
	b.RunParallel(func(pb *testing.PB) {
		n := next.Add(1) % 2
		i := 0
		for pb.Next() {
			if err := kvs[n].Set("key-"+strconv.Itoa(i%1024), value); err != nil {
				b.Fatal(err)
			}
			done[n].Add(1)
			i++
		}
	})
	// The fairness: the share of the writes the less lucky Store made
	// (0.5 is fair, 0 is one Store starving the other).
	b.ReportMetric(float64(min(done[0].Load(), done[1].Load()))/float64(b.N), "share-of-slower")
}
