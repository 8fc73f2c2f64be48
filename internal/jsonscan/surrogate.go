package jsonscan

// LoneSurrogate finds the first \u escape in raw, a JSON text, that names a
// UTF-16 surrogate (U+D800–U+DFFF) without being half of a high-low pair.
// encoding/json decodes such an escape to U+FFFD, so a text holding one
// does not mean what it says: a file name `\ud800.txt` would reach a tool as
// "\uFFFD.txt", a different file that may exist. It returns the escape as
// written and its byte offset, or found false.
//
// Backslashes occur in valid JSON only inside strings, each starting an
// escape, so the scan needs no string state: it steps over every escape.
func LoneSurrogate(raw []byte) (escape string, at int, found bool) {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if i+1 >= len(raw) || raw[i+1] != 'u' {
			i++ // a short escape: the byte after the backslash is its own
			continue
		}
		r, ok := hex4(raw, i+2)
		if !ok {
			i++
			continue
		}
		switch {
		case r >= 0xD800 && r <= 0xDBFF: // high: a low must follow at once
			if i+7 < len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
				if lo, ok := hex4(raw, i+8); ok && lo >= 0xDC00 && lo <= 0xDFFF {
					i += 11
					continue
				}
			}
			return string(raw[i : i+6]), i, true
		case r >= 0xDC00 && r <= 0xDFFF: // a low without its high
			return string(raw[i : i+6]), i, true
		}
		i += 5
	}
	return "", 0, false
}

// hex4 is the value of the four hex digits at raw[i:], ok false when there
// are not four.
func hex4(raw []byte, i int) (rune, bool) {
	if i+4 > len(raw) {
		return 0, false
	}
	var r rune
	for _, c := range raw[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
