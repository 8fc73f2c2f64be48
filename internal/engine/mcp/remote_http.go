package mcp

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
)

var (
	// errTooLarge is wrapped when a response body passes the cap.
	errTooLarge = errors.New("response too large")
	// errNotMCP is wrapped when a server answers with something that is
	// neither JSON nor an event stream (an HTML page, a proxy's error).
	errNotMCP = errors.New("not an MCP response")
	// errRedirect is wrapped when a server redirects off its origin.
	errRedirect = errors.New("redirect refused")
)

// remoteClient wraps the capsule's egress client for one server at u:
// headers added to the server's own origin only, redirects kept to that
// origin (the egress client re-checks each hop as well), every answer to a
// POST checked to be MCP and every body capped at max bytes except the
// standalone event stream (GET), whose events are capped by the transport.
func remoteClient(base *http.Client, u *url.URL, headers http.Header, max int, server string) *http.Client {
	origin := originOf(u)
	return &http.Client{
		Transport: &remoteTransport{base: base.Transport, origin: origin, headers: headers, max: int64(max), server: server},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if originOf(req.URL) != origin {
				return fmt.Errorf("MCP server %s redirected %s to %s, off its origin %s: %w", server, via[len(via)-1].URL.Redacted(), req.URL.Redacted(), origin, errRedirect)
			}
			if base.CheckRedirect != nil {
				return base.CheckRedirect(req, via)
			}
			return nil
		},
		Timeout: base.Timeout,
	}
}

// originOf is scheme://host:port with the scheme's default port written.
func originOf(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return strings.ToLower(u.Scheme + "://" + u.Hostname() + ":" + port)
}

type remoteTransport struct {
	base    http.RoundTripper
	origin  string
	headers http.Header
	max     int64
	server  string
}

func (t *remoteTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 && originOf(req.URL) == t.origin {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			if k == "Authorization" && req.Header.Get("Authorization") != "" {
				continue // an OAuth token the transport set wins
			}
			req.Header[k] = v
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if req.Method == http.MethodPost && resp.StatusCode >= 200 && resp.StatusCode < 300 &&
		resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusNoContent &&
		ct != "application/json" && ct != "text/event-stream" {
		_ = resp.Body.Close()
		if ct == "" {
			ct = "no content type"
		}
		return nil, fmt.Errorf("MCP server %s answered with %s, which is not MCP (JSON or an event stream); is %s its MCP endpoint? %w", t.server, ct, req.URL.Redacted(), errNotMCP)
	}
	if req.Method != http.MethodGet || ct != "text/event-stream" {
		resp.Body = &cappedBody{body: resp.Body, left: t.max, max: t.max, server: t.server}
	}
	return resp, nil
}

// cappedBody ends a body with an error once it passes max bytes.
type cappedBody struct {
	body   io.ReadCloser
	left   int64
	max    int64
	server string
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, b.err()
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.body.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n + int(b.left), b.err()
	}
	return n, err
}

func (b *cappedBody) err() error {
	return fmt.Errorf("MCP server %s sent a response over %d bytes; refused: %w", b.server, b.max, errTooLarge)
}

func (b *cappedBody) Close() error { return b.body.Close() }
