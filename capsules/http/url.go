package http

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// maxURLBytes bounds the URL a caller may pass. 8 KiB is what common
// servers and proxies accept in a request line; a longer URL is more likely
// data being smuggled out in a query string than a page.
const maxURLBytes = 8 << 10

// checkURL parses the url argument and refuses, with a message the model
// can act on, what fetch_url never fetches: another scheme, credentials in
// the URL, an IPv6 zone, no host, an over-long URL. Whether the host may be
// reached is not decided here: the host's egress client does that on the
// address actually connected, on every hop.
func checkURL(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, fmt.Errorf("url is empty")
	}
	if len(raw) > maxURLBytes {
		return nil, fmt.Errorf("url is %d bytes; fetch_url takes URLs of at most %d bytes", len(raw), maxURLBytes)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("url %q is not a URL: %w", clip(raw), err)
	}
	// url.Parse has already lower-cased the scheme, so HTTPS:// passes.
	if u.Scheme != "http" && u.Scheme != "https" {
		if u.Scheme == "" {
			return nil, fmt.Errorf("url %q has no scheme; fetch_url fetches http:// and https:// URLs only", clip(raw))
		}
		return nil, fmt.Errorf("url %q: scheme %q is refused; fetch_url fetches http:// and https:// URLs only", clip(raw), u.Scheme)
	}
	if u.User != nil {
		return nil, fmt.Errorf("url %q carries userinfo (user:password@host); fetch_url refuses credentials in a URL: they would be sent to the server and end up in logs", u.Redacted())
	}
	if u.Opaque != "" || u.Host == "" {
		return nil, fmt.Errorf("url %q has no host", clip(raw))
	}
	if strings.Contains(u.Host, "%") {
		return nil, fmt.Errorf("url %q names an IPv6 zone (%%25...); scoped link-local addresses are refused", clip(raw))
	}
	u.Fragment, u.RawFragment = "", "" // never sent; a page's fragment is the reader's business
	return u, nil
}

// clip shortens what an error quotes back, so a refused 8 KiB URL does not
// fill the model's context.
func clip(s string) string {
	const keep = 200
	if len(s) <= keep {
		return s
	}
	cut := keep
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
