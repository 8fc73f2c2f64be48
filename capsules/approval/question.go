package approval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxResourceBytes is how much of a call's arguments a question shows
// (spec §5.5 truncates a resource to 1024); past it the resource ends with
// a marker saying how much was left out.
const MaxResourceBytes = 1024

// maxStringBytes is how much of one string argument a question shows, so
// that a long value (a file's content) cannot push the others (its path)
// out of the resource.
const maxStringBytes = 384

// resource is what the person is shown of a call's arguments: the JSON
// compacted (object keys sorted), every string longer than maxStringBytes
// cut with a marker inside it, every control or format character escaped
// (a right-to-left override or a zero-width space in a path would make the
// text read as something it is not), and the whole cut visibly past
// MaxResourceBytes.
func resource(args json.RawMessage) string {
	shown := string(args)
	var v any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if dec.Decode(&v) == nil {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if enc.Encode(shorten(v)) == nil {
			shown = strings.TrimSuffix(buf.String(), "\n")
		}
	}
	shown = escapeInvisible(shown)
	if len(shown) <= MaxResourceBytes {
		return shown
	}
	return cut(shown, MaxResourceBytes)
}

// shorten cuts every string in v past maxStringBytes.
func shorten(v any) any {
	switch x := v.(type) {
	case string:
		if len(x) > maxStringBytes {
			return cut(x, maxStringBytes)
		}
	case []any:
		for i := range x {
			x[i] = shorten(x[i])
		}
	case map[string]any:
		for k, e := range x {
			x[k] = shorten(e)
		}
	}
	return v
}

// cut keeps the first n bytes of s (backing up to a rune boundary) and
// says how much was left out.
func cut(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%s … [truncated: %d of %d bytes shown]", s[:n], n, len(s))
}

// escapeInvisible writes every control and format character (and invalid
// UTF-8) of s as a \uXXXX escape, which inside a JSON string is the same
// value, so the text shown is the text that runs.
func escapeInvisible(s string) string {
	if !strings.ContainsFunc(s, invisible) && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r == utf8.RuneError || invisible(r) {
			if r > 0xFFFF {
				hi, lo := utf16Pair(r)
				fmt.Fprintf(&b, `\u%04x\u%04x`, hi, lo)
				continue
			}
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func invisible(r rune) bool {
	return unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}

// utf16Pair is r's UTF-16 surrogate pair (r > U+FFFF).
func utf16Pair(r rune) (hi, lo rune) {
	r -= 0x10000
	return 0xD800 + (r>>10)&0x3FF, 0xDC00 + r&0x3FF
}

// reason is the question's why: which capsule provides the tool, that it
// changes things, and that a session or always answer allows the whole
// tool, not only the call shown.
func reason(tool, capsule string, v verdict) string {
	why := "it is marked as changing things (mutable)"
	if !v.described {
		why = "it did not describe the tool, so it is treated as changing things"
	}
	return fmt.Sprintf("Capsule '%s' provides the tool %s, and %s. Approve runs this call once; "+
		"for this session or always allows every %s call of '%s' without asking.", capsule, tool, why, tool, capsule)
}
