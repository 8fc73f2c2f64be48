package ipc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf8"
)

// The envelope's compact binary form, for carrying it between hosts (the
// NATS transport) where its JSON form cost more than the rest of a
// forwarded publish (BENCHMARKS.md). It holds every field the JSON form
// does, and keeps what JSON loses (a Provenance with nothing set, an empty
// signature apart from none):
//
//	version (1 byte, binaryVersion)
//	topic, source_id, principal      each uvarint(len) | bytes
//	timestamp                        varint (zig-zag)
//	seq                              uvarint
//	flags (1 byte)                   provenanceSet | signatureSet | traceSet | requestSet
//	  if provenanceSet:
//	  signature                      uvarint(len) | bytes, if signatureSet
//	  device_key_id, origin          each uvarint(len) | bytes
//	  trace id, span id, trace flags 16 + 8 + 1 bytes, if traceSet
//	  reply_to, correlation_id       each uvarint(len) | bytes, if requestSet
//	  deadline                       varint (zig-zag), if requestSet
//	payload                          the rest, as published
//
// A field added to Envelope or Provenance must be added here too (and the
// version raised when old readers cannot skip it): TestBinaryKeepsEveryField
// fails until it is.

// binaryVersion 2 added requestSet; a version 1 frame is still read (it
// never has the flag).
const (
	binaryVersion    = 2
	oldBinaryVersion = 1
)

const (
	provenanceSet = 1 << iota
	signatureSet
	traceSet
	requestSet
	knownFlags = provenanceSet | signatureSet | traceSet | requestSet
)

// ErrBinaryEnvelope is wrapped by every refusal of DecodeBinary.
var ErrBinaryEnvelope = errors.New("ipc: not a binary envelope")

// AppendBinary appends the envelope's binary form to b.
func (e *Envelope) AppendBinary(b []byte) ([]byte, error) {
	b = append(b, binaryVersion)
	b = appendField(b, e.Topic)
	b = appendField(b, e.SourceID)
	b = appendField(b, e.Principal)
	b = binary.AppendVarint(b, e.Timestamp)
	b = binary.AppendUvarint(b, e.Seq)
	p := e.Provenance
	if p == nil {
		b = append(b, 0)
		return append(b, e.Payload...), nil
	}
	flags := byte(provenanceSet)
	if p.Signature != nil {
		flags |= signatureSet
	}
	if p.Trace.Valid() {
		flags |= traceSet
	}
	if p.ReplyTo != "" || p.CorrelationID != "" || p.Deadline != 0 {
		flags |= requestSet
	}
	b = append(b, flags)
	if p.Signature != nil {
		b = binary.AppendUvarint(b, uint64(len(p.Signature)))
		b = append(b, p.Signature...)
	}
	b = appendField(b, p.DeviceKeyID)
	b = appendField(b, string(p.Origin))
	if flags&traceSet != 0 {
		b = append(b, p.Trace.TraceID[:]...)
		b = append(b, p.Trace.SpanID[:]...)
		b = append(b, p.Trace.Flags)
	}
	if flags&requestSet != 0 {
		b = appendField(b, p.ReplyTo)
		b = appendField(b, p.CorrelationID)
		b = binary.AppendVarint(b, p.Deadline)
	}
	return append(b, e.Payload...), nil
}

func appendField(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// DecodeBinary sets e from its binary form. The payload is not copied: it
// aliases data, which the caller must then leave unchanged. Text fields must
// be valid UTF-8 (the JSON form cannot carry anything else); an origin other
// than the known ones reads as OriginSystem, as in the JSON form. The
// payload's JSON is not checked here: the caller decides whether to.
func (e *Envelope) DecodeBinary(data []byte) error {
	r := binaryReader{data: data}
	if v := r.byte(); v != binaryVersion && v != oldBinaryVersion {
		if r.err == nil {
			r.fail("version %d, want %d", v, binaryVersion)
		}
		return r.err
	}
	var out Envelope
	out.Topic = r.text("topic")
	out.SourceID = r.text("source_id")
	out.Principal = r.text("principal")
	out.Timestamp = r.varint("timestamp")
	out.Seq = r.uvarint("seq")
	flags := r.byte()
	if flags&^knownFlags != 0 || (flags&(signatureSet|traceSet|requestSet) != 0 && flags&provenanceSet == 0) || (flags&requestSet != 0 && data[0] == oldBinaryVersion) {
		r.fail("flags %#x", flags)
	}
	if r.err == nil && flags&provenanceSet != 0 {
		p := new(Provenance)
		if flags&signatureSet != 0 {
			p.Signature = Signature(append([]byte{}, r.bytes("signature")...))
		}
		p.DeviceKeyID = r.text("device_key_id")
		switch o := Origin(r.text("origin")); o {
		case OriginLocalSocket, OriginRemoteGateway:
			p.Origin = o
		}
		if flags&traceSet != 0 {
			// Ids that are not a trace are dropped, as a bad traceparent
			// in the JSON form is: a peer cannot join the zero trace.
			var t TraceContext
			if raw := r.fixed("trace", len(t.TraceID)+len(t.SpanID)+1); raw != nil {
				copy(t.TraceID[:], raw)
				copy(t.SpanID[:], raw[len(t.TraceID):])
				t.Flags = raw[len(raw)-1]
				if t.Valid() {
					p.Trace = t
				}
			}
		}
		if flags&requestSet != 0 {
			p.ReplyTo = r.text("reply_to")
			p.CorrelationID = r.text("correlation_id")
			p.Deadline = r.varint("deadline")
		}
		out.Provenance = p
	}
	if r.err != nil {
		return r.err
	}
	if rest := r.data[r.off:]; len(rest) > 0 {
		out.Payload = rest
	}
	*e = out
	return nil
}

// binaryReader reads fields in order; after the first error every read
// returns a zero value and err keeps that first error.
type binaryReader struct {
	data []byte
	off  int
	err  error
}

func (r *binaryReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", ErrBinaryEnvelope, fmt.Sprintf(format, args...))
	}
}

func (r *binaryReader) byte() byte {
	if r.err != nil {
		return 0
	}
	if r.off >= len(r.data) {
		r.fail("ends early")
		return 0
	}
	c := r.data[r.off]
	r.off++
	return c
}

func (r *binaryReader) uvarint(field string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.data[r.off:])
	if n <= 0 {
		r.fail("%s: bad varint", field)
		return 0
	}
	r.off += n
	return v
}

func (r *binaryReader) varint(field string) int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.data[r.off:])
	if n <= 0 {
		r.fail("%s: bad varint", field)
		return 0
	}
	r.off += n
	return v
}

func (r *binaryReader) bytes(field string) []byte {
	n := r.uvarint(field)
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.data)-r.off) {
		r.fail("%s: length %d past the end", field, n)
		return nil
	}
	b := r.data[r.off : r.off+int(n)]
	r.off += int(n)
	return b
}

// fixed reads n bytes.
func (r *binaryReader) fixed(field string, n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > len(r.data)-r.off {
		r.fail("%s: %d bytes past the end", field, n)
		return nil
	}
	b := r.data[r.off : r.off+n]
	r.off += n
	return b
}

func (r *binaryReader) text(field string) string {
	b := r.bytes(field)
	if r.err != nil || len(b) == 0 {
		return ""
	}
	if !utf8.Valid(b) {
		r.fail("%s: not UTF-8", field)
		return ""
	}
	return string(b)
}
