package promptbuilder

import (
	"fmt"
	"unicode/utf8"
)

// cut shortens s to at most max bytes on a rune boundary and appends a
// note naming what was cut, so neither the model nor a reader of the
// prompt takes the text for whole.
func cut(s string, max int, what string) string {
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("\n[%s was cut here: %d of its %d bytes are left out]", what, len(s)-n, len(s))
}
