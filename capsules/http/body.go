package http

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// The kinds of body fetch_url tells apart by Content-Type (sniffed when
// absent).
const (
	kindHTML   = "html"
	kindText   = "text" // JSON, XML, plain text, source: passed through
	kindBinary = "binary"
)

// kindOf classifies a body by its media type, and by its first bytes when
// the server named none or a generic one.
func kindOf(contentType string, body []byte) string {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		return kindHTML
	case mt == "application/json" || strings.HasSuffix(mt, "+json") ||
		strings.HasPrefix(mt, "text/") || mt == "application/xml" || strings.HasSuffix(mt, "+xml") ||
		mt == "application/javascript" || mt == "application/x-ndjson" || mt == "application/yaml" ||
		mt == "application/toml":
		return kindText
	case mt == "" || mt == "application/octet-stream":
		if looksLikeHTML(body) {
			return kindHTML
		}
	}
	if looksLikeText(body) {
		return kindText
	}
	return kindBinary
}

// looksLikeHTML sniffs as browsers do for the common cases: a document
// that starts (after whitespace) with a doctype or an <html>, <head> or
// <body> tag.
func looksLikeHTML(body []byte) bool {
	head := strings.ToLower(strings.TrimLeft(string(body[:min(len(body), 512)]), " \t\r\n\ufeff"))
	for _, p := range []string{"<!doctype html", "<html", "<head", "<body"} {
		if strings.HasPrefix(head, p) {
			return true
		}
	}
	return false
}

// looksLikeText reports whether the first 8 KiB are UTF-8 without NULs (a
// rune cut at the sample's end is allowed).
func looksLikeText(body []byte) bool {
	sample := body[:min(len(body), 8<<10)]
	if strings.IndexByte(string(sample), 0) >= 0 {
		return false
	}
	for len(sample) > 0 {
		r, size := utf8.DecodeRune(sample)
		if r == utf8.RuneError && size == 1 && len(sample) >= utf8.UTFMax {
			return false
		}
		sample = sample[size:]
	}
	return true
}

// render is the body as the model reads it.
func render(body []byte, contentType, format string, base *url.URL) string {
	kind := kindOf(contentType, body)
	switch {
	case kind == kindBinary:
		return fmt.Sprintf("[binary content: %d bytes of %s, not shown]", len(body), orUnknown(contentType))
	case kind == kindHTML && format != formatRaw:
		return clean(ReduceHTML(body, base))
	}
	return clean(string(body))
}

func orUnknown(contentType string) string {
	if contentType == "" {
		return "unknown type"
	}
	return contentType
}

// clean makes text safe and compact to carry: invalid UTF-8 becomes U+FFFD
// and control characters other than newline and tab are dropped (each
// would cost six bytes of JSON escape and means nothing to a reader).
func clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f {
			return -1
		}
		return r
	}, s)
}

// truncate cuts s to at most limit bytes at a UTF-8 boundary and says, at
// the cut, how much was left out.
func truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n\n[...truncated: showing %d of %d bytes, %d bytes left out; call again with a larger max_bytes (at most %d) to see more]",
		cut, len(s), len(s)-cut, maxMaxBytes)
}
