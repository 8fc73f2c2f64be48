package ipc

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func TestBinaryRoundTrip(t *testing.T) {
	for name, e := range map[string]*Envelope{
		"plain":            {Topic: "a.b", Payload: json.RawMessage(`{"x":[1,2,"é"]}`), SourceID: "cap", Principal: "alice", Seq: 1, Timestamp: 1},
		"negative stamp":   {Topic: "a.b", Payload: json.RawMessage(`null`), SourceID: "cap", Seq: 1 << 63, Timestamp: -5},
		"no payload":       {Topic: "a", SourceID: "c"},
		"full provenance":  {Topic: "a", Payload: json.RawMessage(`1`), SourceID: "c", Provenance: &Provenance{Signature: Signature{0, 255}, DeviceKeyID: "k", Origin: OriginRemoteGateway}},
		"empty signature":  {Topic: "a", Payload: json.RawMessage(`1`), SourceID: "c", Provenance: &Provenance{Signature: Signature{}}},
		"empty provenance": {Topic: "a", Payload: json.RawMessage(`1`), SourceID: "c", Provenance: &Provenance{}},
		"traced":           {Topic: "a", Payload: json.RawMessage(`1`), SourceID: "c", Provenance: &Provenance{Trace: TraceContext{TraceID: [16]byte{15: 1}, SpanID: [8]byte{7: 2}, Flags: 1}}},
	} {
		data, err := e.AppendBinary([]byte("prefix"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got Envelope
		if err := got.DecodeBinary(data[len("prefix"):]); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(&got, e) {
			t.Errorf("%s: decoded %+v\nwant %+v", name, got, *e)
		}
		want, _ := json.Marshal(e)
		have, _ := json.Marshal(&got)
		if string(want) != string(have) {
			t.Errorf("%s: JSON form %s, want %s", name, have, want)
		}
	}
}

// TestBinaryKeepsEveryField fills every field of Envelope and Provenance,
// found by reflection, so that a field added later and left out of the
// binary form fails here.
func TestBinaryKeepsEveryField(t *testing.T) {
	e := new(Envelope)
	fillFields(t, reflect.ValueOf(e).Elem())
	data, err := e.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	var got Envelope
	if err := got.DecodeBinary(data); err != nil {
		t.Fatal(err)
	}
	// The scope is local to the kernel that stamped it: it never crosses.
	if got.Scope != 0 {
		t.Fatalf("the scope crossed the binary form: %d", got.Scope)
	}
	got.Scope = e.Scope
	// Nor does the host it came from: the receiving transport says it.
	if got.Host() != "" {
		t.Fatalf("the host crossed the binary form: %q", got.Host())
	}
	got.SetHost(e.Host())
	if !reflect.DeepEqual(&got, e) {
		t.Fatalf("a field did not survive the binary form:\ngot  %+v\nwant %+v", got, *e)
	}
	if got.Provenance == nil || got.Provenance.Origin != OriginRemoteGateway {
		t.Fatalf("provenance lost: %+v", got.Provenance)
	}
}

func fillFields(t *testing.T, v reflect.Value) {
	t.Helper()
	for i := 0; i < v.NumField(); i++ {
		f, name := v.Field(i), v.Type().Field(i).Name
		switch {
		case f.Type() == reflect.TypeFor[TraceContext]():
			f.Set(reflect.ValueOf(TraceContext{TraceID: [16]byte{1, 2, 3, byte(i)}, SpanID: [8]byte{9, 8, byte(i)}, Flags: TraceFlagSampled}))
		case f.Type() == reflect.TypeFor[Origin]():
			f.SetString(string(OriginRemoteGateway))
		case f.Type() == reflect.TypeFor[json.RawMessage]():
			f.SetBytes([]byte(`{"field":"` + name + `"}`))
		case f.Kind() == reflect.String:
			f.SetString("value of " + name)
		case f.Kind() == reflect.Int64:
			f.SetInt(-int64(i) - 1_000_000_007)
		case f.Kind() == reflect.Uint64:
			f.SetUint(uint64(i) + 1<<40)
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Uint8:
			f.SetBytes([]byte{byte(i), 0, 255})
		case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Struct:
			f.Set(reflect.New(f.Type().Elem()))
			fillFields(t, f.Elem())
		default:
			t.Fatalf("field %s has a kind (%s) this test cannot fill: teach it and the binary form", name, f.Type())
		}
	}
}

func TestDecodeBinaryRefuses(t *testing.T) {
	good, _ := (&Envelope{Topic: "a", SourceID: "c", Payload: json.RawMessage(`1`)}).AppendBinary(nil)
	withProv, _ := (&Envelope{Topic: "a", SourceID: "c", Provenance: &Provenance{Signature: Signature{1, 2, 3}}}).AppendBinary(nil)
	for name, data := range map[string][]byte{
		"empty":                     nil,
		"other version":             append([]byte{3}, good[1:]...),
		"request in a version 1":    {oldBinaryVersion, 1, 'a', 1, 'c', 0, 0, 0, provenanceSet | requestSet, 0, 0, 0, 0, 0},
		"topic length past the end": {binaryVersion, 0x7f, 'a'},
		"huge length":               {binaryVersion, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
		"bad varint":                {binaryVersion, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		"topic not UTF-8":           {binaryVersion, 2, 0xc3, 0x28, 0, 0, 0, 0, 0},
		"ends before flags":         good[:6],
		"unknown flag":              {binaryVersion, 1, 'a', 1, 'c', 0, 0, 0, 0x80},
		"signature, no provenance":  {binaryVersion, 1, 'a', 1, 'c', 0, 0, 0, signatureSet},
		"signature cut":             withProv[:len(withProv)-4],
	} {
		var e Envelope
		if err := e.DecodeBinary(data); !errors.Is(err, ErrBinaryEnvelope) {
			t.Errorf("%s: %v, want ErrBinaryEnvelope", name, err)
		}
	}
}

func TestDecodeBinaryMapsUnknownOriginToSystem(t *testing.T) {
	data, _ := (&Envelope{Topic: "a", Provenance: &Provenance{Origin: "mars"}}).AppendBinary(nil)
	var e Envelope
	if err := e.DecodeBinary(data); err != nil {
		t.Fatal(err)
	}
	if e.Origin() != OriginSystem {
		t.Fatalf("origin %q", e.Origin())
	}
}

// FuzzDecodeBinary: the decoder parses what arrives from other hosts. It
// never panics, and what it accepts encodes back to a form that decodes to
// the same envelope.
func FuzzDecodeBinary(f *testing.F) {
	for _, e := range []*Envelope{
		{Topic: "a.b", Payload: json.RawMessage(`{"k":1}`), SourceID: "c", Principal: "p", Seq: 3, Timestamp: 9},
		{Topic: "a", Provenance: &Provenance{Signature: Signature{1}, DeviceKeyID: "d", Origin: OriginLocalSocket}},
	} {
		data, _ := e.AppendBinary(nil)
		f.Add(data)
	}
	f.Add([]byte{binaryVersion})
	f.Fuzz(func(t *testing.T, data []byte) {
		var e Envelope
		if err := e.DecodeBinary(data); err != nil {
			if !errors.Is(err, ErrBinaryEnvelope) {
				t.Fatalf("error does not wrap ErrBinaryEnvelope: %v", err)
			}
			return
		}
		again, err := e.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		var e2 Envelope
		if err := e2.DecodeBinary(again); err != nil {
			t.Fatalf("re-encoded form refused: %v", err)
		}
		if !reflect.DeepEqual(e, e2) {
			t.Fatalf("%+v != %+v", e, e2)
		}
	})
}

// A trace of zero ids in the binary form is dropped, as a bad traceparent
// in the JSON form is; a trace flag without a provenance, or cut short, is
// refused.
func TestBinaryTraceFromTheWire(t *testing.T) {
	e := &Envelope{Topic: "a", SourceID: "c", Provenance: &Provenance{Trace: TraceContext{TraceID: [16]byte{1}, SpanID: [8]byte{1}}}}
	data, err := e.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	zeroed := append([]byte(nil), data...)
	clear(zeroed[len(zeroed)-25:])
	var got Envelope
	if err := got.DecodeBinary(zeroed); err != nil || got.Provenance == nil || got.Trace().Valid() {
		t.Fatalf("zero trace: %+v, %v", got.Provenance, err)
	}
	if err := got.DecodeBinary(data[:len(data)-3]); !errors.Is(err, ErrBinaryEnvelope) {
		t.Fatalf("cut trace: %v", err)
	}
	noProv := (&Envelope{Topic: "a", SourceID: "c"})
	b, _ := noProv.AppendBinary(nil)
	b[len(b)-1] = traceSet
	if err := got.DecodeBinary(b); !errors.Is(err, ErrBinaryEnvelope) {
		t.Fatalf("trace flag without provenance: %v", err)
	}
}
