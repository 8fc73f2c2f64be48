package jsonscan

import (
	"bytes"
	"encoding/json"
	"testing"
)

// AppendString's bytes are encoding/json's, with and without HTML escaping.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", `q"b\s`, "<a href='x'>&amp;</a>", "\x00\x1f\t\n\r\b\f", "\u2028\u2029", "\xff\xfe", "héllo wörld ✓", "long plain text run over eight bytes <"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString(nil, s, true); !bytes.Equal(got, want) {
			t.Fatalf("html: %q gives %s, json.Marshal %s", s, got, want)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if got := AppendString([]byte("x"), s, false); !bytes.Equal(got[1:], want) || got[0] != 'x' {
			t.Fatalf("plain: %q gives %s, the encoder %s", s, got, want)
		}
	})
}
