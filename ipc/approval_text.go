package ipc

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxApprovalResource is how much of a resource an approval question shows
// (spec/capsules-cli.md §5.5 cuts it at 1024); past it the text ends with a
// marker saying how much was left out.
const MaxApprovalResource = 1024

// MaxApprovalAction bounds an approval question's action (§5.5: longer is
// an error).
const MaxApprovalAction = 256

// ApprovalText is s as an approval question shows it to a person: every
// control or format character (a right-to-left override, a zero-width
// space, a line separator) and every invalid UTF-8 byte written as a
// \uXXXX escape, so that the text cannot read as something other than what
// runs, then cut visibly past max bytes (0: no cut). Inside a JSON string
// the escapes denote the same value.
func ApprovalText(s string, max int) string {
	if strings.ContainsFunc(s, invisible) || !utf8.ValidString(s) {
		var b strings.Builder
		for _, r := range s {
			switch {
			case r == utf8.RuneError || invisible(r):
				if r > 0xFFFF {
					r -= 0x10000
					fmt.Fprintf(&b, `\u%04x\u%04x`, 0xD800+(r>>10)&0x3FF, 0xDC00+r&0x3FF)
				} else {
					fmt.Fprintf(&b, `\u%04x`, r)
				}
			default:
				b.WriteRune(r)
			}
		}
		s = b.String()
	}
	if max <= 0 || len(s) <= max {
		return s
	}
	return CutVisibly(s, max)
}

// CutVisibly keeps the first n bytes of s (backing up to a rune boundary)
// and says how much was left out.
func CutVisibly(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%s … [truncated: %d of %d bytes shown]", s[:n], n, len(s))
}

func invisible(r rune) bool {
	return unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}
