// Package http is the built-in web fetch capsule (astrid-capsule-http): one
// read-only tool, fetch_url (spec/capsules-cli.md §5.2), that GETs an
// http(s) URL through the host's HTTPDo and returns the status, the content
// type and the body: HTML reduced to readable text (title, headings,
// paragraphs, list items, links as "text [n]" with the numbered URLs at the
// end; scripts, styles and other non-content dropped), JSON and text passed
// through, anything else described rather than shown. The body is cut at
// max_bytes (default 200 KiB) at a UTF-8 boundary, saying how much was left
// out.
//
// It owns the tool's argument checks (scheme, userinfo, length) and the
// reduction of a body to text. It must not decide which addresses may be
// reached: that is the host's egress client (the `net` gate on every hop,
// the SSRF guard on the address actually connected, the operator's
// allowlist, the host's body and time caps), so a check here only gives an
// earlier, clearer refusal, never a permission. It sends no request body,
// no method but GET and no caller-chosen headers: a fetch must stay a read.
package http
