package ipc

import (
	"strings"
	"testing"
)

// A cancel request comes from any capsule allowed to publish it: what is
// not one, or names more or stranger keys than a call can hold, is
// refused; the envelope's principal, not the payload, says whose calls.
func TestParseCancelRequest(t *testing.T) {
	ok, err := CancelRequest{CorrelationIDs: []string{"call_1", "call_2"}}.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if r, err := ParseCancelRequest(ok); err != nil || len(r.CorrelationIDs) != 2 || r.CorrelationIDs[1] != "call_2" {
		t.Fatalf("ParseCancelRequest(%s) = %+v, %v", ok, r, err)
	}
	many := `{"type":"cancel_request","correlation_ids":["a"` + strings.Repeat(`,"a"`, MaxCancelKeys) + `]}`
	for _, bad := range []string{
		``,
		`[]`,
		`{"correlation_ids":["call_1"]}`,
		`{"type":"tool_cancel_request","call_ids":["call_1"]}`,
		`{"type":"cancel_request","correlation_ids":[""]}`,
		`{"type":"cancel_request","correlation_ids":["` + strings.Repeat("x", 257) + `"]}`,
		`{"type":"cancel_request","correlation_ids":"call_1"}`,
		`{"type":"cancel_request","principal":"someone-else","correlation_ids":[1]}`,
		many,
	} {
		if r, err := ParseCancelRequest([]byte(bad)); err == nil {
			t.Errorf("ParseCancelRequest(%.80s) = %+v, want refused", bad, r)
		}
	}
}

func FuzzParseCancelRequest(f *testing.F) {
	f.Add([]byte(`{"type":"cancel_request","correlation_ids":["call_1"]}`))
	f.Add([]byte(`{"type":"cancel_request","correlation_ids":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseCancelRequest(data)
		if err != nil {
			return
		}
		if len(r.CorrelationIDs) > MaxCancelKeys {
			t.Fatalf("%d keys accepted", len(r.CorrelationIDs))
		}
		for _, id := range r.CorrelationIDs {
			if id == "" || len(id) > 256 {
				t.Fatalf("key %q accepted", id)
			}
		}
		out, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if back, err := ParseCancelRequest(out); err != nil || len(back.CorrelationIDs) != len(r.CorrelationIDs) {
			t.Fatalf("round trip of %s: %+v, %v", out, back, err)
		}
	})
}
