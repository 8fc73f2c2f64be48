package ipc

import (
	"encoding/hex"
	"errors"
	"fmt"
)

// TraceContext is the W3C trace context an envelope carries when tracing is
// on: the trace it belongs to (one per agent turn), the span that published
// it, and the trace flags. The zero value means none. It is a plain value
// (no OpenTelemetry type) so that the envelope, its JSON wire form and every
// transport that carries envelopes stay free of the tracing library.
type TraceContext struct {
	TraceID [16]byte
	SpanID  [8]byte
	Flags   byte
}

// TraceFlagSampled is the W3C "sampled" flag.
const TraceFlagSampled byte = 0x01

// Valid reports whether t names a trace and a span (both non-zero), as W3C
// requires of a traceparent.
func (t TraceContext) Valid() bool {
	return t.TraceID != [16]byte{} && t.SpanID != [8]byte{}
}

// traceparentLen is the length of a version-00 traceparent:
// "00-" 32 hex "-" 16 hex "-" 2 hex.
const traceparentLen = 55

// String is t as a W3C traceparent header value
// ("00-<trace id>-<span id>-<flags>"), or "" when t is not valid.
func (t TraceContext) String() string {
	if !t.Valid() {
		return ""
	}
	var b [traceparentLen]byte
	copy(b[:], "00-")
	hex.Encode(b[3:35], t.TraceID[:])
	b[35] = '-'
	hex.Encode(b[36:52], t.SpanID[:])
	b[52] = '-'
	hex.Encode(b[53:55], []byte{t.Flags})
	return string(b[:])
}

// ErrBadTraceparent is returned by ParseTraceparent for a value that is not
// a version-00 traceparent with non-zero ids.
var ErrBadTraceparent = errors.New("ipc: bad traceparent")

// ParseTraceparent reads a W3C traceparent header value. Only version 00 is
// accepted, lower-case hex only (as the recommendation says), and all-zero
// ids are refused: a peer cannot make an envelope join the zero trace.
func ParseTraceparent(s string) (TraceContext, error) {
	var t TraceContext
	if len(s) != traceparentLen || s[0:3] != "00-" || s[35] != '-' || s[52] != '-' {
		return t, fmt.Errorf("%w: %q", ErrBadTraceparent, s)
	}
	for i := 3; i < traceparentLen; i++ {
		if c := s[i]; (i == 35 || i == 52) || ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') {
			continue
		}
		return TraceContext{}, fmt.Errorf("%w: %q", ErrBadTraceparent, s)
	}
	var flags [1]byte
	if _, err := hex.Decode(t.TraceID[:], []byte(s[3:35])); err != nil {
		return TraceContext{}, fmt.Errorf("%w: %w", ErrBadTraceparent, err)
	}
	if _, err := hex.Decode(t.SpanID[:], []byte(s[36:52])); err != nil {
		return TraceContext{}, fmt.Errorf("%w: %w", ErrBadTraceparent, err)
	}
	if _, err := hex.Decode(flags[:], []byte(s[53:55])); err != nil {
		return TraceContext{}, fmt.Errorf("%w: %w", ErrBadTraceparent, err)
	}
	t.Flags = flags[0]
	if !t.Valid() {
		return TraceContext{}, fmt.Errorf("%w: zero trace or span id", ErrBadTraceparent)
	}
	return t, nil
}

// Trace is the trace context the envelope carries; the zero TraceContext
// when it carries none (always, when tracing is off).
func (e *Envelope) Trace() TraceContext {
	if e.Provenance == nil {
		return TraceContext{}
	}
	return e.Provenance.Trace
}

// SetTrace records t as the envelope's trace context. Only the publisher
// may call it, before the envelope is handed to the bus (an envelope once
// published is shared by every receiver). An invalid t clears it.
func (e *Envelope) SetTrace(t TraceContext) {
	if !t.Valid() {
		if e.Provenance != nil {
			e.Provenance.Trace = TraceContext{}
		}
		return
	}
	if e.Provenance == nil {
		e.Provenance = &Provenance{}
	}
	e.Provenance.Trace = t
}
