package abi

import (
	"reflect"
	"testing"
)

func TestPackResult(t *testing.T) {
	tests := []struct {
		ptr, n uint32
		isErr  bool
	}{{0, 0, false}, {0, 0, true}, {0x10, 5, false}, {0xffffffff, 0x7fffffff, true}}
	for _, tt := range tests {
		p, n, e := UnpackResult(PackResult(tt.ptr, tt.n, tt.isErr))
		if p != tt.ptr || n != tt.n || e != tt.isErr {
			t.Errorf("round trip of %+v gave %#x %d %v", tt, p, n, e)
		}
	}
	if PackResult(0, 0, false) != 0 {
		t.Error("success without bytes must pack to 0 (the Continue fast path)")
	}
}

func TestInvocationRecord(t *testing.T) {
	inv := Invocation{Pattern: "a.*", Topic: "a.b", SourceID: "src", Principal: "alice", Payload: []byte(`{"x":1}`)}
	rec := EncodeInvocation(nil, 7, inv)
	if len(rec) != InvocationSize(inv) {
		t.Fatalf("record is %d bytes, InvocationSize says %d", len(rec), InvocationSize(inv))
	}
	h, got, err := DecodeInvocation(rec)
	if err != nil || h != 7 || !reflect.DeepEqual(got, inv) {
		t.Fatalf("decode = %d, %+v, %v", h, got, err)
	}
	// The decoded fields are copies: changing the record changes none.
	rec[len(rec)-2] = 'X'
	if string(got.Payload) != `{"x":1}` {
		t.Fatalf("the decoded payload aliases the record: %s", got.Payload)
	}
	empty := Invocation{}
	if h, got, err := DecodeInvocation(EncodeInvocation(nil, 0, empty)); err != nil || h != 0 || !reflect.DeepEqual(got, empty) {
		t.Fatalf("empty invocation decoded as %d, %+v, %v", h, got, err)
	}
	rec = EncodeInvocation(nil, 7, inv)
	bad := map[string][]byte{
		"short":         rec[:20],
		"truncated":     rec[:len(rec)-1],
		"trailing":      append(append([]byte(nil), rec...), 0),
		"wrong version": append([]byte{Version + 1, 0, 0, 0}, rec[4:]...),
		"huge lengths":  append(append([]byte(nil), rec[:8]...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff),
	}
	for name, b := range bad {
		if _, _, err := DecodeInvocation(b); err == nil {
			t.Errorf("%s record accepted", name)
		}
	}
}

func TestHandlerList(t *testing.T) {
	for _, names := range [][]string{nil, {"a"}, {"noop", "tool_describe", "tool_execute_read_file"}} {
		got, err := DecodeHandlers(EncodeHandlers(names))
		if err != nil || len(got) != len(names) {
			t.Fatalf("round trip of %q gave %q, %v", names, got, err)
		}
		for i := range names {
			if got[i] != names[i] {
				t.Errorf("name %d = %q, want %q", i, got[i], names[i])
			}
		}
	}
	for name, b := range map[string][]byte{
		"short":          {1, 0},
		"count past end": {9, 0, 0, 0, 1, 0, 0, 0, 'x'},
		"name past end":  {1, 0, 0, 0, 5, 0, 0, 0, 'x'},
		"trailing":       {1, 0, 0, 0, 1, 0, 0, 0, 'x', 'y'},
	} {
		if _, err := DecodeHandlers(b); err == nil {
			t.Errorf("%s list accepted", name)
		}
	}
}

func TestVerdictRecord(t *testing.T) {
	for _, v := range []Verdict{
		{Action: 1, Payload: []byte(`"ok"`)},
		{Action: 2, Reason: "no"},
		{Action: 0, Payload: []byte(`{}`)},
	} {
		got, err := DecodeVerdict(AppendVerdict(nil, v))
		if err != nil || !reflect.DeepEqual(got, v) {
			t.Errorf("round trip of %+v gave %+v, %v", v, got, err)
		}
		reused := AppendVerdict([]byte("stale bytes"), v)[len("stale bytes"):]
		if got, err := DecodeVerdict(reused); err != nil || !reflect.DeepEqual(got, v) {
			t.Errorf("AppendVerdict of %+v gave %+v, %v", v, got, err)
		}
	}
	for name, b := range map[string][]byte{
		"short":          {1, 0, 0},
		"payload past":   {1, 0, 0, 0, 9, 0, 0, 0, 'x'},
		"unknown action": {7, 0, 0, 0, 0, 0, 0, 0},
	} {
		if _, err := DecodeVerdict(b); err == nil {
			t.Errorf("%s verdict accepted", name)
		}
	}
}

func TestErrorRecord(t *testing.T) {
	code, msg, ok := DecodeError(AppendError(nil, 3, "publish: topic x: denied by ACL"))
	if !ok || code != 3 || msg != "publish: topic x: denied by ACL" {
		t.Errorf("decoded %d %q %v", code, msg, ok)
	}
	if _, _, ok := DecodeError([]byte{1}); ok {
		t.Error("a record shorter than its code decoded")
	}
}

func TestRecordCheck(t *testing.T) {
	inv := Invocation{Pattern: "a.*", Topic: "a.b", SourceID: "src", Principal: "alice", Payload: []byte(`{"x":1}`)}
	rec := EncodeInvocation(nil, 2, inv)
	r := Record{Buf: make([]byte, 256)}
	copy(r.Buf, rec)
	if got := r.Check(int32(len(rec)), 3); got != 3 {
		t.Fatalf("check of a valid record = %d, want 3 (handler 2 + 1)", got)
	}
	got := Invocation{Pattern: string(r.Field(FieldPattern)), Topic: string(r.Field(FieldTopic)), SourceID: string(r.Field(FieldSource)),
		Principal: string(r.Field(FieldPrincipal)), Payload: r.Field(FieldPayload)}
	if !reflect.DeepEqual(got, inv) {
		t.Fatalf("fields = %+v, want %+v", got, inv)
	}

	empty := EncodeInvocation(nil, 0, Invocation{})
	copy(r.Buf, empty)
	if got := r.Check(int32(len(empty)), 1); got != 1 || len(r.Field(FieldPayload)) != 0 || len(r.Field(FieldTopic)) != 0 {
		t.Fatalf("empty invocation: check = %d, payload %q, topic %q", got, r.Field(FieldPayload), r.Field(FieldTopic))
	}

	for name, tc := range map[string]struct {
		rec      []byte
		n        int32
		handlers int
	}{
		"no such handler": {rec, int32(len(rec)), 2},
		"no handlers":     {rec, int32(len(rec)), 0},
		"short":           {rec, 20, 3},
		"truncated":       {rec, int32(len(rec) - 1), 3},
		"trailing":        {append(append([]byte(nil), rec...), 0), int32(len(rec) + 1), 3},
		"wrong version":   {append([]byte{Version + 1, 0, 0, 0}, rec[4:]...), int32(len(rec)), 3},
		"negative length": {rec, -1, 3},
		"past the buffer": {rec, 257, 3},
		"huge lengths":    {append(append([]byte(nil), rec[:8]...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), int32(len(rec)), 3},
		"handler wraps":   {append(append([]byte(nil), rec[:4]...), append([]byte{0xff, 0xff, 0xff, 0xff}, rec[8:]...)...), int32(len(rec)), 3},
	} {
		clear(r.Buf)
		copy(r.Buf, tc.rec)
		if got := r.Check(tc.n, tc.handlers); got != 0 {
			t.Errorf("%s: check = %d, want 0", name, got)
		}
		if r.n != 0 || r.off != [6]uint32{} || len(r.Field(FieldPayload)) != 0 || len(r.Field(FieldPrincipal)) != 0 {
			t.Errorf("%s: a rejected record left fields behind: n %d, off %v", name, r.n, r.off)
		}
	}
}
