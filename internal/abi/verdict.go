package abi

import (
	"encoding/binary"
	"errors"
)

// Verdict is a verdict record's content (docs/abi.md §4). Action is 0
// (continue), 1 (final) or 2 (deny).
type Verdict struct {
	Action  uint32
	Payload []byte
	Reason  string
}

// maxAction is the largest action docs/abi.md defines (deny).
const maxAction = 2

// AppendVerdict appends v to dst as a verdict record (the guest reuses one
// buffer).
func AppendVerdict(dst []byte, v Verdict) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, v.Action)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(v.Payload)))
	dst = append(dst, v.Payload...)
	return append(dst, v.Reason...)
}

// DecodeVerdict parses a verdict record, copying out of rec.
func DecodeVerdict(rec []byte) (Verdict, error) {
	if len(rec) < 8 {
		return Verdict{}, errors.New("verdict record shorter than 8 bytes")
	}
	n := binary.LittleEndian.Uint32(rec[4:])
	if uint64(n) > uint64(len(rec)-8) {
		return Verdict{}, errors.New("verdict payload length past the record")
	}
	v := Verdict{Action: binary.LittleEndian.Uint32(rec)}
	if v.Action > maxAction {
		return Verdict{}, errors.New("verdict action is not 0, 1 or 2")
	}
	if n > 0 {
		v.Payload = append([]byte(nil), rec[8:8+n]...)
	}
	v.Reason = string(rec[8+n:])
	return v, nil
}

// AppendError appends an error record to dst: u32 code, then the message.
func AppendError(dst []byte, code uint32, msg string) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, code)
	return append(dst, msg...)
}

// DecodeError parses an error record; ok is false for one shorter than its
// code.
func DecodeError(rec []byte) (code uint32, msg string, ok bool) {
	if len(rec) < 4 {
		return 0, "", false
	}
	return binary.LittleEndian.Uint32(rec), string(rec[4:]), true
}
