package wasm

import (
	"encoding/binary"
	"errors"
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

// mergeDataSegments returns the module with its data section rewritten to
// fewer segments, or wasm itself when that is not provably equivalent:
// every segment must be active in memory 0 at an i32.const offset, no two
// may overlap (so the order they are applied in is unobservable and a gap
// was never written), no memory may be imported (a failed instantiation
// then leaves nothing observable), and there must be no data count
// section (without one, memory.init and data.drop cannot appear, so
// segment indices are unobservable). Gaps read as zeros either way, since
// a new instance's memory is zeroed. A malformed module is returned as it
// is, for the compiler to reject with its own error.
func mergeDataSegments(wasm []byte) []byte {
	if len(wasm) < 8 {
		return wasm
	}
	var dataStart, dataEnd int // the whole data section, id included
	var segs []dataSegment
	for pos := 8; pos < len(wasm); {
		id := wasm[pos]
		size, n := binary.Uvarint(wasm[pos+1:])
		body := pos + 1 + n
		if n <= 0 || size > uint64(len(wasm)-body) {
			return wasm
		}
		end := body + int(size)
		switch id {
		case sectionDataCount:
			return wasm
		case sectionImport:
			if importsMemory(wasm[body:end]) {
				return wasm
			}
		case sectionData:
			var err error
			if segs, err = parseDataSection(wasm[body:end]); err != nil {
				return wasm
			}
			dataStart, dataEnd = pos, end
		}
		pos = end
	}
	if len(segs) < 2 {
		return wasm
	}
	slices.SortFunc(segs, func(a, b dataSegment) int { return int(int64(a.offset) - int64(b.offset)) })
	// groups[i] is the index in segs of the first segment of merged group i.
	groups := make([]int, 1, 16)
	sectionSize := 0
	for i := 1; i < len(segs); i++ {
		prevEnd := uint64(segs[i-1].offset) + uint64(len(segs[i-1].init))
		if uint64(segs[i].offset) < prevEnd {
			return wasm // overlapping segments: order matters
		}
		if uint64(segs[i].offset)-prevEnd > maxMergeGap {
			groups = append(groups, i)
		}
	}
	if len(groups) == len(segs) {
		return wasm
	}
	groups = append(groups, len(segs))
	sizes := make([]uint32, len(groups)-1)
	for g := range sizes {
		first, last := segs[groups[g]], segs[groups[g+1]-1]
		sizes[g] = last.offset + uint32(len(last.init)) - first.offset
		sectionSize += 1 + 1 + 5 + 1 + binary.MaxVarintLen32 + int(sizes[g])
	}
	// One allocation, written once: the module is read at every load.
	out := make([]byte, 0, len(wasm)-(dataEnd-dataStart)+1+binary.MaxVarintLen32*2+sectionSize)
	out = append(out, wasm[:dataStart]...)
	out = append(out, sectionData)
	sizeAt := len(out)
	out = append(out, make([]byte, binary.MaxVarintLen32)...) // patched below
	bodyAt := len(out)
	out = binary.AppendUvarint(out, uint64(len(sizes)))
	for g, size := range sizes {
		first := segs[groups[g]].offset
		out = append(out, 0, 0x41) // active in memory 0; i32.const
		out = appendSLEB32(out, int32(first))
		out = append(out, 0x0b) // end
		out = binary.AppendUvarint(out, uint64(size))
		base := len(out)
		out = out[:base+int(size)]
		clear(out[base:])
		for _, s := range segs[groups[g]:groups[g+1]] {
			copy(out[base+int(s.offset-first):], s.init)
		}
	}
	putPaddedUvarint(out[sizeAt:bodyAt], uint32(len(out)-bodyAt))
	return append(out, wasm[dataEnd:]...)
}

// putPaddedUvarint writes v as an unsigned LEB128 filling b exactly
// (continuation bits on every byte but the last), which the format allows.
func putPaddedUvarint(b []byte, v uint32) {
	for i := range b {
		b[i] = byte(v&0x7f) | 0x80
		v >>= 7
	}
	b[len(b)-1] &^= 0x80
}

var errNotMergeable = errors.New("data section not mergeable")

// parseDataSection reads the segments of a data section, failing on any
// segment that is not active in memory 0 at a non-negative i32.const.
func parseDataSection(b []byte) ([]dataSegment, error) {
	count, n := binary.Uvarint(b)
	if n <= 0 || count > uint64(len(b)) {
		return nil, errNotMergeable
	}
	b = b[n:]
	segs := make([]dataSegment, 0, count)
	for range count {
		// flag 0: active, memory 0, offset expression, bytes.
		if len(b) < 2 || b[0] != 0 || b[1] != 0x41 {
			return nil, errNotMergeable
		}
		off, n := readSLEB32(b[2:])
		if n <= 0 || off < 0 || len(b) < 2+n+1 || b[2+n] != 0x0b {
			return nil, errNotMergeable
		}
		b = b[2+n+1:]
		size, n := binary.Uvarint(b)
		if n <= 0 || size > uint64(len(b)-n) || uint64(off)+size > 1<<32 {
			return nil, errNotMergeable
		}
		segs = append(segs, dataSegment{offset: uint32(off), init: b[n : n+int(size)]})
		b = b[n+int(size):]
	}
	if len(b) != 0 {
		return nil, errNotMergeable
	}
	return segs, nil
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
