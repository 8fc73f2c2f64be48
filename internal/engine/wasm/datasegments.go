package wasm

import (
	"cmp"
	"encoding/binary"
	"iter"
	"slices"
)

// Go's wasm linker splits a module's data at every run of zero bytes,
// giving tens of thousands of active data segments. wazero keeps one slice
// header per segment in every instance (about 1 MiB each for a Go capsule)
// and evaluates and copies each segment on every instantiation. Merging
// segments whose gaps are short removes that cost without changing what an
// instance's memory holds.

// maxMergeGap is the longest run of zero bytes written into a merged
// segment in place of a gap (stored once per module, not per instance).
const maxMergeGap = 64

// Section ids of the wasm binary format.
const (
	sectionImport    = 2
	sectionData      = 11
	sectionDataCount = 12
)

type dataSegment struct {
	offset uint32
	init   []byte
}

// segGroup is a run of segments merged into one: memory [first, end).
type segGroup struct {
	first, end uint64
}

// mergeDataSegments returns the module with its data section rewritten to
// fewer segments, or wasm itself when that is not provably equivalent:
// every segment must be active in memory 0 at an i32.const offset, no two
// may overlap (so the order they are applied in is unobservable and a gap
// was never written), no memory may be imported (a failed instantiation
// then leaves nothing observable), and there must be no data count
// section (without one, memory.init and data.drop cannot appear, so
// segment indices are unobservable). Gaps read as zeros either way, since
// a new instance's memory is zeroed. A malformed module is returned as it
// is, for the compiler to reject with its own error. wasm is not modified.
//
// It runs at every load, over a few MiB, on memory that is often fresh
// (page faults dominate), so it allocates exactly one buffer, the result,
// of its exact size, and touches each of its bytes once: the segments are
// read in place, not collected (sortedSegments).
func mergeDataSegments(wasm []byte) []byte {
	if len(wasm) < 8 {
		return wasm
	}
	var dataStart, dataEnd int // the whole data section, id included
	var body []byte
	for pos := 8; pos < len(wasm); {
		id := wasm[pos]
		size, n := binary.Uvarint(wasm[pos+1:])
		start := pos + 1 + n
		if n <= 0 || size > uint64(len(wasm)-start) {
			return wasm
		}
		end := start + int(size)
		switch id {
		case sectionDataCount:
			return wasm
		case sectionImport:
			if importsMemory(wasm[start:end]) {
				return wasm
			}
		case sectionData:
			dataStart, dataEnd, body = pos, end, wasm[start:end]
		}
		pos = end
	}
	if body == nil {
		return wasm
	}
	count, n := binary.Uvarint(body)
	if n <= 0 || count < 2 || count > uint64(len(body)) {
		return wasm
	}
	segs, ok := sortedSegments(body[n:], count)
	if !ok {
		return wasm
	}
	groups, ordered := groupSegments(segs)
	if !ordered {
		return wasm // overlapping segments: order matters
	}
	if uint64(len(groups)) == count {
		return wasm
	}

	bodyLen := uvarintLen(uint64(len(groups)))
	for _, g := range groups {
		size := g.end - g.first
		bodyLen += 2 + slebLen(int32(g.first)) + 1 + uvarintLen(size) + int(size)
	}
	sectionLen := 1 + uvarintLen(uint64(bodyLen)) + bodyLen
	// make zeroes it: the gaps between merged segments need no writing.
	out := make([]byte, len(wasm)-(dataEnd-dataStart)+sectionLen)
	w := copy(out, wasm[:dataStart])
	out[w] = sectionData
	w++
	w += binary.PutUvarint(out[w:], uint64(bodyLen))
	w += binary.PutUvarint(out[w:], uint64(len(groups)))
	g, base := -1, 0
	var prevEnd uint64
	for s := range segs {
		off := uint64(s.offset)
		if g < 0 || off-prevEnd > maxMergeGap {
			g++
			first, size := groups[g].first, groups[g].end-groups[g].first
			out[w], out[w+1] = 0, 0x41 // active in memory 0; i32.const
			w += 2
			w += putSLEB32(out[w:], int32(first))
			out[w] = 0x0b // end
			w++
			w += binary.PutUvarint(out[w:], size)
			base = w - int(first)
			w += int(size)
		}
		copy(out[base+int(off):], s.init)
		prevEnd = off + uint64(len(s.init))
	}
	copy(out[w:], wasm[dataEnd:])
	return out
}

// run is a stretch of segments stored in ascending, non-overlapping order:
// n segments from byte pos of the section body.
type run struct {
	pos, n int
}

// maxRuns bounds the runs merged in place; more are sorted as a whole.
const maxRuns = 32

// sortedSegments returns the segments of a data section body (after the
// count) in ascending order of offset, or false when one is not active in
// memory 0 at a non-negative i32.const offset or the body is malformed.
//
// Go's linker stores a module's data as a few runs, each sorted, which
// interleave in memory (two for a Go capsule: 2655 and 43356 segments).
// The runs are merged as they are read, in place; only a module of many
// runs (another producer) has its segments collected and sorted.
func sortedSegments(b []byte, count uint64) (iter.Seq[dataSegment], bool) {
	runs := make([]run, 0, 8)
	var prevEnd uint64
	rest := b
	for range count {
		pos := len(b) - len(rest)
		s, next, ok := parseSegment(rest)
		if !ok {
			return nil, false
		}
		rest = next
		if off := uint64(s.offset); len(runs) == 0 || off < prevEnd {
			runs = append(runs, run{pos: pos})
		}
		runs[len(runs)-1].n++
		prevEnd = uint64(s.offset) + uint64(len(s.init))
	}
	if len(rest) != 0 {
		return nil, false
	}
	if len(runs) > maxRuns {
		all := make([]dataSegment, 0, count)
		for rest := b; len(rest) > 0; {
			s, next, _ := parseSegment(rest)
			all = append(all, s)
			rest = next
		}
		slices.SortStableFunc(all, func(a, b dataSegment) int { return cmp.Compare(a.offset, b.offset) })
		return slices.Values(all), true
	}
	return func(yield func(dataSegment) bool) {
		// heads[i] is run i's next segment, rests[i] what follows it.
		var heads [maxRuns]dataSegment
		var rests [maxRuns][]byte
		left := make([]int, len(runs))
		for i, r := range runs {
			heads[i], rests[i], _ = parseSegment(b[r.pos:])
			left[i] = r.n
		}
		for {
			lo := -1 // the run whose head has the lowest offset
			for i := range runs {
				if left[i] > 0 && (lo < 0 || heads[i].offset < heads[lo].offset) {
					lo = i
				}
			}
			if lo < 0 || !yield(heads[lo]) {
				return
			}
			if left[lo]--; left[lo] > 0 {
				heads[lo], rests[lo], _ = parseSegment(rests[lo])
			}
		}
	}, true
}

// groupSegments groups segs, in ascending order of offset, into groups
// whose gaps are at most maxMergeGap. ordered is false, and groups
// incomplete, when a segment starts before the previous one ends (they
// overlap).
func groupSegments(segs iter.Seq[dataSegment]) (groups []segGroup, ordered bool) {
	groups = make([]segGroup, 0, 256) // a Go module has a few hundred
	var prevEnd uint64
	for s := range segs {
		off, end := uint64(s.offset), uint64(s.offset)+uint64(len(s.init))
		switch {
		case len(groups) > 0 && off < prevEnd:
			return nil, false
		case len(groups) == 0 || off-prevEnd > maxMergeGap:
			groups = append(groups, segGroup{first: off, end: end})
		default:
			groups[len(groups)-1].end = end
		}
		prevEnd = end
	}
	return groups, true
}

// parseSegment reads the segment at the start of b, which must be active
// in memory 0 at a non-negative i32.const, and returns the bytes after it.
func parseSegment(b []byte) (dataSegment, []byte, bool) {
	// flag 0: active, memory 0, offset expression, bytes.
	if len(b) < 2 || b[0] != 0 || b[1] != 0x41 {
		return dataSegment{}, nil, false
	}
	off, n := readSLEB32(b[2:])
	if n <= 0 || off < 0 || len(b) < 2+n+1 || b[2+n] != 0x0b {
		return dataSegment{}, nil, false
	}
	b = b[2+n+1:]
	size, n := binary.Uvarint(b)
	if n <= 0 || size > uint64(len(b)-n) || uint64(off)+size > 1<<32 {
		return dataSegment{}, nil, false
	}
	return dataSegment{offset: uint32(off), init: b[n : n+int(size)]}, b[n+int(size):], true
}

// uvarintLen is the length of v's shortest unsigned LEB128.
func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// slebLen is the length of v's shortest signed LEB128.
func slebLen(v int32) int {
	var buf [5]byte
	return putSLEB32(buf[:], v)
}

// putSLEB32 writes v's shortest signed LEB128 and returns its length.
func putSLEB32(b []byte, v int32) int {
	x := int64(v)
	for i := 0; ; i++ {
		c := byte(x & 0x7f)
		x >>= 7
		if (x == 0 && c&0x40 == 0) || (x == -1 && c&0x40 != 0) {
			b[i] = c
			return i + 1
		}
		b[i] = c | 0x80
	}
}

// importsMemory reports whether an import section imports a memory, or
// cannot be read (then nothing is rewritten).
func importsMemory(b []byte) bool {
	count, n := binary.Uvarint(b)
	if n <= 0 {
		return true
	}
	b = b[n:]
	for range count {
		for range 2 { // module and field names
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return true
			}
			b = b[n+int(l):]
		}
		if len(b) == 0 {
			return true
		}
		kind := b[0]
		b = b[1:]
		var ok bool
		switch kind {
		case 0x00: // function: type index
			b, ok = skipUvarint(b)
		case 0x01: // table: reftype, limits
			if len(b) == 0 {
				return true
			}
			b, ok = skipLimits(b[1:])
		case 0x02: // memory
			return true
		case 0x03: // global: valtype, mutability
			ok = len(b) >= 2
			if ok {
				b = b[2:]
			}
		case 0x04: // tag: attribute, type index
			if len(b) == 0 {
				return true
			}
			b, ok = skipUvarint(b[1:])
		}
		if !ok {
			return true
		}
	}
	return false
}

func skipUvarint(b []byte) ([]byte, bool) {
	_, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, false
	}
	return b[n:], true
}

func skipLimits(b []byte) ([]byte, bool) {
	if len(b) == 0 {
		return nil, false
	}
	flag := b[0]
	b, ok := skipUvarint(b[1:])
	if ok && flag&1 != 0 {
		b, ok = skipUvarint(b)
	}
	return b, ok
}

// readSLEB32 decodes a signed LEB128 of at most 5 bytes.
func readSLEB32(b []byte) (int32, int) {
	var v int64
	var shift uint
	for i := 0; i < len(b) && i < 5; i++ {
		c := b[i]
		v |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			if v < -1<<31 || v > 1<<31-1 {
				return 0, -1
			}
			return int32(v), i + 1
		}
	}
	return 0, -1
}
