package sdk

import (
	"encoding/binary"
	"errors"
	"unsafe"

	"github.com/astrid-go/astrid/hostapi"
)

// The byte layouts of docs/abi.md that both sides of the wasm boundary share.
// They build on every platform so the host-independent parts are tested
// natively; the guest glue that uses them is in wasm_wasip1.go.

// ABIVersion is the version of docs/abi.md this sdk implements.
const ABIVersion = 2

// errorFlag marks a packed result carrying an error record.
const errorFlag = uint64(1) << 63

// PackResult packs a pointer and a length (and the error flag) into the i64
// every ABI call returns.
func PackResult(ptr, n uint32, isErr bool) uint64 {
	v := uint64(n&0x7fffffff)<<32 | uint64(ptr)
	if isErr {
		v |= errorFlag
	}
	return v
}

// UnpackResult splits a packed result.
func UnpackResult(v uint64) (ptr, n uint32, isErr bool) {
	return uint32(v), uint32(v>>32) & 0x7fffffff, v&errorFlag != 0
}

// InvocationHeader is the fixed part of an invocation record: the version
// and six u32 fields.
const InvocationHeader = 7 * 4

// EncodeInvocation lays inv out as the invocation record of docs/abi.md §4.
// handler is the index of inv.Handler in the guest's astrid_handlers list;
// the name itself does not cross (a guest finds its handler by index, so no
// string is compared or hashed on the hot path).
func EncodeInvocation(dst []byte, handler uint32, inv hostapi.Invocation) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, ABIVersion)
	dst = binary.LittleEndian.AppendUint32(dst, handler)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(inv.Pattern)))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(inv.Topic)))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(inv.SourceID)))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(inv.Principal)))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(inv.Payload)))
	dst = append(dst, inv.Pattern...)
	dst = append(dst, inv.Topic...)
	dst = append(dst, inv.SourceID...)
	dst = append(dst, inv.Principal...)
	return append(dst, inv.Payload...)
}

// InvocationSize is the length of inv's record.
func InvocationSize(inv hostapi.Invocation) int {
	return InvocationHeader + len(inv.Pattern) + len(inv.Topic) + len(inv.SourceID) + len(inv.Principal) + len(inv.Payload)
}

var errBadRecord = errors.New("malformed invocation record")

// invocationRecord is a guest's record buffer (astrid_invocation, docs/abi.md
// §4): the host writes each call's record at its start, and the call reads
// it in place. Checking a record stores only integers, so it needs no
// write barrier, and has no branch: with WithCloseOnContextDone every
// taken branch of a Go guest costs a trip to the host (docs/abi.md §4).
type invocationRecord struct {
	// buf is the buffer astrid_invocation handed the host, at least
	// InvocationHeader bytes.
	buf []byte
	// n is the length of the record of the call in progress.
	n uint32
	// off bounds its fields: field i (pattern, topic, source, principal,
	// payload) is buf[off[i]:off[i+1]]. All zero after a malformed record.
	off [6]uint32
}

// Field numbers of invocationRecord.field.
const (
	fieldPattern = iota
	fieldTopic
	fieldSource
	fieldPrincipal
	fieldPayload
)

// check reads the record of length n the host wrote, for a guest with
// handlers handlers, and answers 1 + its handler index, or 0 when the
// record is malformed (wrong version, n past the buffer, lengths that do
// not add up to n, or no such handler). It has no branch and no bounds
// check: the header is read through an array of the header's length,
// which buf always holds.
func (r *invocationRecord) check(n int32, handlers int) uint32 {
	h := (*[InvocationHeader]byte)(unsafe.Pointer(unsafe.SliceData(r.buf)))
	le := binary.LittleEndian
	o1 := uint64(InvocationHeader) + uint64(le.Uint32(h[8:]))
	o2 := o1 + uint64(le.Uint32(h[12:]))
	o3 := o2 + uint64(le.Uint32(h[16:]))
	o4 := o3 + uint64(le.Uint32(h[20:]))
	o5 := o4 + uint64(le.Uint32(h[24:]))
	handler := le.Uint32(h[4:])
	ok := b2u(le.Uint32(h[0:]) == ABIVersion) &
		b2u(n >= 0) & b2u(uint64(n) <= uint64(len(r.buf))) & b2u(o5 == uint64(n)) &
		b2u(uint64(handler) < uint64(handlers))
	r.n = uint32(n) * ok
	r.off = [6]uint32{InvocationHeader * ok, uint32(o1) * ok, uint32(o2) * ok, uint32(o3) * ok, uint32(o4) * ok, uint32(o5) * ok}
	return (handler + 1) * ok
}

// field is field i of the checked record.
func (r *invocationRecord) field(i int) []byte {
	return r.buf[r.off[i]:r.off[i+1]:r.off[i+1]]
}

// str is field i as a string, without a copy.
func (r *invocationRecord) str(i int) string {
	b := r.field(i)
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// payload is the payload field, nil when empty.
func (r *invocationRecord) payload() []byte {
	if b := r.field(fieldPayload); len(b) > 0 {
		return b
	}
	return nil
}

// b2u is 1 for true and 0 for false; the compiler makes it a select, not a
// branch.
func b2u(b bool) uint32 {
	var u uint32
	if b {
		u = 1
	}
	return u
}

// invocationView parses rec without copying: the strings and payload point
// into rec. The guest's hot path uses invocationRecord.check instead; this
// explains a record check rejected, and decodes records natively.
func invocationView(rec []byte) (handler uint32, inv hostapi.Invocation, err error) {
	if len(rec) < InvocationHeader || binary.LittleEndian.Uint32(rec) != ABIVersion {
		return 0, hostapi.Invocation{}, errBadRecord
	}
	handler = binary.LittleEndian.Uint32(rec[4:])
	l1 := uint64(binary.LittleEndian.Uint32(rec[8:]))
	l2 := uint64(binary.LittleEndian.Uint32(rec[12:]))
	l3 := uint64(binary.LittleEndian.Uint32(rec[16:]))
	l4 := uint64(binary.LittleEndian.Uint32(rec[20:]))
	l5 := uint64(binary.LittleEndian.Uint32(rec[24:]))
	if InvocationHeader+l1+l2+l3+l4+l5 != uint64(len(rec)) {
		return 0, hostapi.Invocation{}, errBadRecord
	}
	o1 := uint64(InvocationHeader)
	o2 := o1 + l1
	o3 := o2 + l2
	o4 := o3 + l3
	o5 := o4 + l4
	inv.Pattern = view(rec[o1:o2])
	inv.Topic = view(rec[o2:o3])
	inv.SourceID = view(rec[o3:o4])
	inv.Principal = view(rec[o4:o5])
	if l5 > 0 {
		inv.Payload = rec[o5:len(rec):len(rec)]
	}
	return handler, inv, nil
}

// view is b as a string without a copy; b must not change while the string
// is in use.
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// DecodeInvocation parses an invocation record into the handler index and
// an invocation (without its handler name), copying everything out of rec.
func DecodeInvocation(rec []byte) (uint32, hostapi.Invocation, error) {
	own := append([]byte(nil), rec...)
	return invocationView(own)
}

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

// EncodeVerdict lays v out as the verdict record of docs/abi.md §4.
func EncodeVerdict(v hostapi.Verdict) []byte {
	return AppendVerdict(make([]byte, 0, 8+len(v.Payload)+len(v.Reason)), v)
}

// AppendVerdict is EncodeVerdict into dst (the guest reuses one buffer).
func AppendVerdict(dst []byte, v hostapi.Verdict) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(v.Action))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(v.Payload)))
	dst = append(dst, v.Payload...)
	return append(dst, v.Reason...)
}

// DecodeVerdict parses a verdict record.
func DecodeVerdict(rec []byte) (hostapi.Verdict, error) {
	if len(rec) < 8 {
		return hostapi.Verdict{}, errors.New("verdict record shorter than 8 bytes")
	}
	n := binary.LittleEndian.Uint32(rec[4:])
	if uint64(n) > uint64(len(rec)-8) {
		return hostapi.Verdict{}, errors.New("verdict payload length past the record")
	}
	v := hostapi.Verdict{Action: hostapi.Action(binary.LittleEndian.Uint32(rec))}
	if v.Action > hostapi.Deny {
		return hostapi.Verdict{}, errors.New("verdict action is not 0, 1 or 2")
	}
	if n > 0 {
		v.Payload = append([]byte(nil), rec[8:8+n]...)
	}
	v.Reason = string(rec[8+n:])
	return v, nil
}

// EncodeError lays an error out as an error record: u32 code, then the
// message.
func EncodeError(dst []byte, err error) []byte {
	code := hostapi.CodeOf(err)
	if code == hostapi.CodeOK {
		code = hostapi.CodeInternal
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(code))
	return append(dst, err.Error()...)
}

// DecodeError parses an error record. The message already names the
// operation (it is the host error's full text), so a wasm capsule sees the
// same error text as a native one.
func DecodeError(rec []byte) *hostapi.Error {
	if len(rec) < 4 {
		return &hostapi.Error{Code: hostapi.CodeInternal, Message: "malformed error record"}
	}
	return &hostapi.Error{Code: hostapi.Code(binary.LittleEndian.Uint32(rec)), Message: string(rec[4:])}
}
