package audit

import (
	"bytes"
	"context"
	"os"
	"testing"
)

// FuzzDecodeLine feeds the entry decoder arbitrary lines: it must never
// panic, and whatever it accepts must be exactly what the writer would
// have produced for that entry.
func FuzzDecodeLine(f *testing.F) {
	dir, key := f.TempDir(), newKey(f)
	l, err := Open(Options{Dir: dir, Key: key})
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range []Entry{
		{Principal: "default", Kind: KindToolEnded, Capsule: "fs", Subject: "read_file", Outcome: "ok", Detail: map[string]string{"args_sha256": "ab"}},
		{Kind: KindCapsuleLoaded, Capsule: "router"},
	} {
		if err := l.Append(context.Background(), e); err != nil {
			f.Fatal(err)
		}
	}
	l.Close()
	for _, p := range []string{"default", ""} {
		b, _ := os.ReadFile(ChainPath(dir, p))
		f.Add(bytes.TrimSuffix(b, []byte("\n")))
	}
	f.Add([]byte(`{"entry":{},"sig":""}`))
	f.Add([]byte(`{"entry":{"seq":1,"time":"2026-12-07T12:00:00Z","kind":"audit.seal","prev":"0000000000000000000000000000000000000000000000000000000000000000"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeLine(b)
		if err != nil {
			return
		}
		body, err := encodeBody(&r.Entry)
		if err != nil || !bytes.Equal(body, r.Body) {
			t.Fatalf("accepted a body that does not re-encode to itself: %q", b)
		}
		// The writer's encoder makes the same bytes (FuzzAppendBody
		// tries it on any strings; this, on any line the reader takes).
		if fast, err := appendBody(nil, &r.Entry); err != nil || !bytes.Equal(fast, r.Body) {
			t.Fatalf("appendBody differs from encoding/json on an accepted line: %q", b)
		}
		sig := ""
		if r.Signed() {
			sig = string(b[bytes.LastIndex(b, []byte(`"sig":"`))+7 : len(b)-2])
		}
		if !bytes.Equal(append(append([]byte(nil), b...), '\n'), frame(r.Body, sig)) {
			t.Fatalf("accepted a line that is not canonical: %q", b)
		}
	})
}
