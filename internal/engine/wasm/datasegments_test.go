package wasm

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"testing"

	"github.com/tetratelabs/wazero"
)

// wasmModule assembles a module from (id, body) sections.
func wasmModule(sections ...[]byte) []byte {
	out := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	for _, s := range sections {
		out = append(out, s[0])
		out = binary.AppendUvarint(out, uint64(len(s)-1))
		out = append(out, s[1:]...)
	}
	return out
}

func section(id byte, body ...byte) []byte { return append([]byte{id}, body...) }

// memorySection declares one memory of one page, exported as "memory".
var (
	memorySection = section(5, 1, 0, 1)
	exportMemory  = section(7, 1, 6, 'm', 'e', 'm', 'o', 'r', 'y', 2, 0)
)

type seg struct {
	flag   byte
	offset int32
	init   string
}

func dataSection(segs ...seg) []byte {
	b := []byte{sectionData}
	b = binary.AppendUvarint(b, uint64(len(segs)))
	for _, s := range segs {
		b = append(b, s.flag)
		if s.flag != 1 { // passive segments have no offset
			b = append(b, 0x41)
			b = appendSLEB32(b, s.offset)
			b = append(b, 0x0b)
		}
		b = binary.AppendUvarint(b, uint64(len(s.init)))
		b = append(b, s.init...)
	}
	return b
}

// descending is n two-byte segments two bytes apart, stored last first:
// n runs of one segment.
func descending(n int) []seg {
	segs := make([]seg, n)
	for i := range segs {
		segs[i] = seg{0, int32(4 * (n - 1 - i)), string([]byte{'a' + byte(i%26), 'A' + byte(i%26)})}
	}
	return segs
}

func dataSegmentCount(t testing.TB, wasm []byte) int {
	t.Helper()
	for pos := 8; pos < len(wasm); {
		size, n := binary.Uvarint(wasm[pos+1:])
		body := pos + 1 + n
		if wasm[pos] == sectionData {
			count, _ := binary.Uvarint(wasm[body:])
			return int(count)
		}
		pos = body + int(size)
	}
	return 0
}

// memoryAfterInstantiation instantiates wasm alone and returns its memory.
func memoryAfterInstantiation(t *testing.T, wasm []byte) []byte {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer func() { _ = rt.Close(ctx) }()
	mod, err := rt.Instantiate(ctx, wasm)
	if err != nil {
		t.Fatalf("instantiate: %v", err)
	}
	b, _ := mod.Memory().Read(0, mod.Memory().Size())
	return bytes.Clone(b)
}

func TestMergeDataSegments(t *testing.T) {
	tests := []struct {
		name     string
		module   []byte
		segments int // after merging; 0: the module must come back unchanged
	}{
		{"short gaps merge", wasmModule(memorySection, exportMemory, dataSection(
			seg{0, 16, "ab"}, seg{0, 20, "cd"}, seg{0, 22 + maxMergeGap, "ef"})), 1},
		{"out of order, not overlapping", wasmModule(memorySection, exportMemory, dataSection(
			seg{0, 1000, "late"}, seg{0, 8, "early"}, seg{0, 1010, "later"})), 2},
		{"interleaved runs", wasmModule(memorySection, exportMemory, dataSection(
			seg{0, 0, "a"}, seg{0, 100, "b"}, seg{0, 10, "c"}, seg{0, 110, "d"})), 2},
		{"more runs than are merged in place", wasmModule(memorySection, exportMemory, dataSection(descending(maxRuns+8)...)), 1},
		{"overlap across runs", wasmModule(memorySection, exportMemory, dataSection(
			seg{0, 0, "abcd"}, seg{0, 10, "x"}, seg{0, 2, "yy"})), 0},
		{"long gap kept", wasmModule(memorySection, exportMemory, dataSection(
			seg{0, 0, "a"}, seg{0, 1 + maxMergeGap, "b"}, seg{0, 10000, "c"})), 2},
		{"a long gap alone changes nothing", wasmModule(memorySection, exportMemory, dataSection(
			seg{0, 0, "a"}, seg{0, 1 + maxMergeGap + 1, "b"})), 0},
		{"overlapping segments: order matters", wasmModule(memorySection, exportMemory, dataSection(
			seg{0, 0, "abcd"}, seg{0, 2, "XY"})), 0},
		{"passive segment", wasmModule(memorySection, exportMemory, dataSection(
			seg{0, 0, "a"}, seg{1, 0, "b"})), 0},
		{"data count section: indices observable", wasmModule(memorySection, exportMemory, section(sectionDataCount, 2), dataSection(
			seg{0, 0, "a"}, seg{0, 2, "b"})), 0},
		{"imported memory: partial writes observable", wasmModule(
			section(sectionImport, 1, 1, 'e', 1, 'm', 2, 0, 1), dataSection(
				seg{0, 0, "a"}, seg{0, 2, "b"})), 0},
		{"single segment", wasmModule(memorySection, exportMemory, dataSection(seg{0, 0, "a"})), 0},
		{"truncated", wasmModule(memorySection, exportMemory, dataSection(seg{0, 0, "a"}, seg{0, 2, "b"}))[:30], 0},
		{"negative offset", wasmModule(memorySection, exportMemory, dataSection(seg{0, -1, "a"}, seg{0, 2, "b"})), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := bytes.Clone(tt.module)
			got := mergeDataSegments(tt.module)
			if !bytes.Equal(tt.module, orig) {
				t.Fatal("the input module was modified")
			}
			if tt.segments == 0 {
				if !bytes.Equal(got, tt.module) {
					t.Fatalf("module rewritten, want it unchanged")
				}
				return
			}
			if n := dataSegmentCount(t, got); n != tt.segments {
				t.Fatalf("%d data segments after merging, want %d", n, tt.segments)
			}
			if want, have := memoryAfterInstantiation(t, tt.module), memoryAfterInstantiation(t, got); !bytes.Equal(want, have) {
				t.Fatal("memory after instantiation differs from the original module's")
			}
		})
	}
}

// TestMergeDataSegmentsGoGuest checks the case the merge exists for: a Go
// capsule's thousands of segments become a few, and a fresh instance's
// memory is byte for byte the original's.
func TestMergeDataSegmentsGoGuest(t *testing.T) {
	f := loadHostile(t, Options{})
	orig, err := readComponent(f.eng.m, f.eng.comp, 0)
	if err != nil {
		t.Fatal(err)
	}
	merged := mergeDataSegments(orig)
	before, after := dataSegmentCount(t, orig), dataSegmentCount(t, merged)
	if after >= before/100 {
		t.Fatalf("%d data segments merged into %d, want far fewer", before, after)
	}
	ctx := context.Background()
	memory := func(wasm []byte) []byte {
		cm, err := f.rt.rt.CompileModule(ctx, wasm)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cm.Close(ctx) }()
		mod, err := f.rt.rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName("").WithStartFunctions())
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = mod.Close(ctx) }()
		b, _ := mod.Memory().Read(0, mod.Memory().Size())
		return bytes.Clone(b)
	}
	if !bytes.Equal(memory(orig), memory(merged)) {
		t.Fatal("a fresh instance's memory differs between the original and the merged module")
	}
}

// BenchmarkMergeDataSegments merges a Go guest's data section, as every
// load does.
func BenchmarkMergeDataSegments(b *testing.B) {
	orig, err := os.ReadFile(guest(b, "testdata/hostile").Wasm)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(dataSegmentCount(b, orig)), "segments")
	b.SetBytes(int64(len(orig)))
	b.ReportAllocs()
	for b.Loop() {
		mergeDataSegments(orig)
	}
}

func appendSLEB32(b []byte, v int32) []byte {
	x := int64(v)
	for {
		c := byte(x & 0x7f)
		x >>= 7
		if (x == 0 && c&0x40 == 0) || (x == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// applySegments is the reference model: the memory a fresh instance of a
// one-page module has after its data section's active segments are
// applied in order (the module's only data, by construction).
func applySegments(t *testing.T, wasm []byte) []byte {
	t.Helper()
	mem := make([]byte, 65536)
	for pos := 8; pos < len(wasm); {
		size, n := binary.Uvarint(wasm[pos+1:])
		body := pos + 1 + n
		if wasm[pos] == sectionData {
			b := wasm[body : body+int(size)]
			count, n := binary.Uvarint(b)
			b = b[n:]
			for range count {
				s, rest, ok := parseSegment(b)
				if !ok {
					t.Fatalf("unreadable segment in %x", wasm)
				}
				copy(mem[s.offset:], s.init)
				b = rest
			}
		}
		pos = body + int(size)
	}
	return mem
}

// FuzzMergeDataSegments builds a module from fuzzed segments (any order,
// gaps and overlaps) and checks that a merged module's memory is the
// original's, segment for segment of the model, and that everything
// outside the data section is unchanged.
func FuzzMergeDataSegments(f *testing.F) {
	f.Add([]byte{0, 2, 'a', 'b', 4, 2, 'c', 'd', 200, 1, 'e'})
	f.Add([]byte{100, 1, 'a', 0, 1, 'b', 110, 1, 'c', 10, 1, 'd', 120, 1, 'e'})
	f.Add([]byte{0, 4, 'a', 'b', 'c', 'd', 2, 2, 'x', 'y'})
	f.Fuzz(func(t *testing.T, spec []byte) {
		// Each segment: offset/4 (one byte), length, then its bytes.
		var segs []seg
		for len(spec) >= 2 {
			off, n := int32(spec[0])*4, int(spec[1])%16
			spec = spec[2:]
			n = min(n, len(spec))
			segs = append(segs, seg{0, off, string(spec[:n])})
			spec = spec[n:]
		}
		orig := wasmModule(memorySection, exportMemory, dataSection(segs...))
		in := bytes.Clone(orig)
		got := mergeDataSegments(in)
		if !bytes.Equal(in, orig) {
			t.Fatal("the input module was modified")
		}
		if bytes.Equal(got, orig) {
			return
		}
		if n := dataSegmentCount(t, got); n >= len(segs) {
			t.Fatalf("%d segments rewritten into %d", len(segs), n)
		}
		if !bytes.Equal(applySegments(t, got), applySegments(t, orig)) {
			t.Fatalf("merged memory differs\norig %x\ngot  %x", orig, got)
		}
		prefix := len(wasmModule(memorySection, exportMemory))
		if !bytes.Equal(got[:prefix], orig[:prefix]) || got[prefix] != sectionData {
			t.Fatal("sections before the data section changed")
		}
	})
}
