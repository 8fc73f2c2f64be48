package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLoneSurrogate(t *testing.T) {
	for _, c := range []struct {
		in     string
		escape string
		at     int
	}{
		// Refused: what encoding/json would turn into U+FFFD.
		{`{"file_path":"\ud800.txt"}`, `\ud800`, 14},
		{`{"file_path":"\uD800.txt"}`, `\uD800`, 14},
		{`{"file_path":"\udfff"}`, `\udfff`, 14},               // a low alone
		{`{"p":"\udc00\ud800"}`, `\udc00`, 6},                  // pair in the wrong order
		{`{"p":"\ud800\ud800"}`, `\ud800`, 6},                  // two highs
		{`{"p":"\ud800\u0041"}`, `\ud800`, 6},                  // high then not a low
		{`{"p":"\ud83d"}`, `\ud83d`, 6},                        // high at the end of the string
		{`{"p":"\ud83d\n\ude00"}`, `\ud83d`, 6},                // something between the halves
		{`{"p":"ok \ud83d\ude00","q":"\udbff"}`, `\udbff`, 28}, // the second string's
		{`["\uDBFF"]`, `\uDBFF`, 2},
		{`{"\ud800":1}`, `\ud800`, 2}, // in a key
		// Accepted.
		{`{"file_path":"a.txt"}`, "", -1},
		{`{"p":"\ud83d\ude00"}`, "", -1}, // 😀, a proper pair
		{`{"p":"\uD83D\uDE00"}`, "", -1},
		{`{"p":"\\ud800"}`, "", -1}, // an escaped backslash, then text
		{`{"p":"\\\ud83d\ude00"}`, "", -1},
		{`{"p":"\ud7ff\ue000"}`, "", -1}, // just outside the range
		{`{"p":"\ufffd"}`, "", -1},
		{`{"p":"\u00e9\n\t\""}`, "", -1},
		{`"\u12"`, "", -1}, // malformed: encoding/json refuses it itself
		{`\`, "", -1},
	} {
		esc, at, found := LoneSurrogate([]byte(c.in))
		if found != (c.at >= 0) || esc != c.escape || (found && at != c.at) {
			t.Errorf("LoneSurrogate(%s) = %q at %d (%v), want %q at %d", c.in, esc, at, found, c.escape, c.at)
		}
		if found && !strings.HasPrefix(c.in[at:], esc) {
			t.Errorf("%s: offset %d does not point at %q", c.in, at, esc)
		}
	}
}

// FuzzLoneSurrogate: on valid JSON, a text LoneSurrogate passes decodes
// without encoding/json inventing a U+FFFD, and one it refuses holds the
// escape it names where it says.
func FuzzLoneSurrogate(f *testing.F) {
	for _, s := range []string{`"\ud800"`, `"\ud83d\ude00"`, `{"a":"\\ud800"}`, `["\udc00x"]`, `"\ufffd"`, `"\uD83D\uDE00\uD83D"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		esc, at, found := LoneSurrogate(raw)
		if found {
			if !bytes.HasPrefix(raw[at:], []byte(esc)) || len(esc) != 6 {
				t.Fatalf("%q: reported %q at %d", raw, esc, at)
			}
			return
		}
		if !json.Valid(raw) || !utf8.Valid(raw) || bytes.Contains(raw, []byte("\uFFFD")) ||
			bytes.Contains(bytes.ToLower(raw), []byte(`\ufffd`)) {
			return
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return
		}
		out, _ := json.Marshal(v)
		if bytes.Contains(out, []byte("\uFFFD")) || bytes.Contains(out, []byte(`\ufffd`)) {
			t.Fatalf("%q passed, but decodes to %s with a U+FFFD", raw, out)
		}
	})
}
