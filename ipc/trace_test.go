package ipc

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestTraceparentRoundTrip(t *testing.T) {
	const s = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tc, err := ParseTraceparent(s)
	if err != nil {
		t.Fatal(err)
	}
	if !tc.Valid() || tc.Flags != TraceFlagSampled || tc.TraceID[0] != 0x4b || tc.SpanID[7] != 0xb7 {
		t.Fatalf("parsed %+v", tc)
	}
	if got := tc.String(); got != s {
		t.Fatalf("String = %q, want %q", got, s)
	}
	if (TraceContext{}).String() != "" {
		t.Fatal("the zero trace context has a traceparent")
	}
}

// A traceparent comes from the wire (the daemon's socket, NATS): anything
// but a well-formed version-00 value with non-zero ids is refused.
func TestParseTraceparentRefuses(t *testing.T) {
	for name, s := range map[string]string{
		"empty":          "",
		"version 01":     "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"version ff":     "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"upper case":     "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
		"zero trace":     "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
		"zero span":      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
		"short":          "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
		"long":           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",
		"separator":      "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
		"not hex":        "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
		"html":           "00-<script>alert(1)</script>aaaaaaaaaaaaaaaaaaaaaaaa-01",
		"dash in id":     "00-4bf92f3577b34da6-3ce929d0e0e4736-00f067aa0ba902b7-01",
		"unicode digits": "00-4bf92f3577b34da6a3ce929d0e0e473٣-00f067aa0ba902b7-01",
	} {
		t.Run(name, func(t *testing.T) {
			if tc, err := ParseTraceparent(s); !errors.Is(err, ErrBadTraceparent) || tc != (TraceContext{}) {
				t.Fatalf("ParseTraceparent(%q) = %+v, %v; want ErrBadTraceparent", s, tc, err)
			}
		})
	}
}

// A frame whose traceparent is bad still decodes (tracing is advisory), with
// no trace and, when nothing else is set, no Provenance.
func TestEnvelopeBadTraceparentDropped(t *testing.T) {
	var e Envelope
	frame := `{"topic":"a.b","payload":{},"signature":null,"source_id":"x","timestamp":"2026-05-01T12:00:00Z","seq":1,"traceparent":"00-zz"}`
	if err := json.Unmarshal([]byte(frame), &e); err != nil {
		t.Fatal(err)
	}
	if e.Provenance != nil || e.Trace().Valid() {
		t.Fatalf("bad traceparent kept: %+v", e.Provenance)
	}
}

func TestEnvelopeSetTrace(t *testing.T) {
	tc := TraceContext{TraceID: [16]byte{1}, SpanID: [8]byte{2}, Flags: TraceFlagSampled}
	var e Envelope
	e.SetTrace(TraceContext{})
	if e.Provenance != nil {
		t.Fatal("an invalid trace context allocated a Provenance")
	}
	e.SetTrace(tc)
	if e.Trace() != tc || e.Origin() != OriginSystem || e.Signature() != nil {
		t.Fatalf("after SetTrace: trace %+v origin %q", e.Trace(), e.Origin())
	}
	e.SetTrace(TraceContext{})
	if e.Trace().Valid() {
		t.Fatal("SetTrace(zero) kept the old trace")
	}
}

// A traceparent from the wire either parses to a valid context that prints
// back to the same text, or is refused.
func FuzzParseTraceparent(f *testing.F) {
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Add("00-00000000000000000000000000000000-00f067aa0ba902b7-01")
	f.Add("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Fuzz(func(t *testing.T, s string) {
		tc, err := ParseTraceparent(s)
		if err != nil {
			if tc != (TraceContext{}) {
				t.Fatalf("refused %q but returned %+v", s, tc)
			}
			return
		}
		if !tc.Valid() || tc.String() != s {
			t.Fatalf("%q parsed to %+v, which prints %q", s, tc, tc.String())
		}
	})
}
