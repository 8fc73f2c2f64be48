package abi

import (
	"encoding/binary"
	"errors"
)

// EncodeHandlers lays names out as the astrid_handlers list of docs/abi.md
// §3: u32 count, then each name as u32 length and bytes. A handler's index
// is its position in the list.
func EncodeHandlers(names []string) []byte {
	out := binary.LittleEndian.AppendUint32(nil, uint32(len(names)))
	for _, n := range names {
		out = binary.LittleEndian.AppendUint32(out, uint32(len(n)))
		out = append(out, n...)
	}
	return out
}

// DecodeHandlers parses an astrid_handlers list.
func DecodeHandlers(b []byte) ([]string, error) {
	if len(b) < 4 {
		return nil, errors.New("handler list shorter than 4 bytes")
	}
	n := binary.LittleEndian.Uint32(b)
	b = b[4:]
	if uint64(n) > uint64(len(b))/4 {
		return nil, errors.New("handler count past the list")
	}
	names := make([]string, 0, n)
	for range n {
		if len(b) < 4 {
			return nil, errors.New("handler list truncated")
		}
		l := binary.LittleEndian.Uint32(b)
		b = b[4:]
		if uint64(l) > uint64(len(b)) {
			return nil, errors.New("handler name past the list")
		}
		names = append(names, string(b[:l]))
		b = b[l:]
	}
	if len(b) != 0 {
		return nil, errors.New("trailing bytes after the handler list")
	}
	return names, nil
}
