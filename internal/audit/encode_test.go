package audit

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// tricky are strings whose JSON encoding has every escape
// encoding/json makes.
var tricky = []string{"", "plain", `"q"\`, "<a>&b", "\x00\x01\x1f\b\f\n\r\t", "é€😀", "\u2028\u2029", "bad\xffutf8\xc3", "\x7f"}

func TestAppendBodyIsMarshal(t *testing.T) {
	for _, s := range tricky {
		for _, detail := range []map[string]string{nil, {}, {s: s, "b": "x", "a": s}} {
			e := Entry{Seq: 7, Time: time.Date(2026, 12, 7, 12, 0, 0, 123400, time.UTC), Principal: s, Kind: Kind(s), Capsule: s,
				Subject: s, Outcome: s, Detail: detail, Prev: Genesis}
			assertSameEncoding(t, &e)
		}
	}
	assertSameEncoding(t, &Entry{Seq: 1, Prev: Genesis}) // zero time, empty fields
}

func assertSameEncoding(t testing.TB, e *Entry) {
	t.Helper()
	want, werr := json.Marshal(e)
	got, gerr := appendBody(nil, e)
	if (werr != nil) != (gerr != nil) || werr == nil && !bytes.Equal(got, want) {
		t.Fatalf("appendBody:\n%s (%v)\njson.Marshal:\n%s (%v)", got, gerr, want, werr)
	}
}

// FuzzAppendBody holds the writer's encoder to encoding/json's for any
// strings and times (its seeds run with every go test; scripts/fuzz.sh
// fuzzes FuzzDecodeLine, which checks the same on every line it accepts).
func FuzzAppendBody(f *testing.F) {
	for _, s := range tricky {
		f.Add(s, s, int64(0), uint64(1))
	}
	f.Fuzz(func(t *testing.T, s, k string, ns int64, seq uint64) {
		e := Entry{Seq: seq, Time: time.Unix(0, ns).UTC(), Principal: s, Kind: Kind(k), Subject: s, Detail: map[string]string{k: s, s: k}, Prev: s}
		assertSameEncoding(t, &e)
	})
}
