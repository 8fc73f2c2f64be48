package modellist

import (
	"fmt"
	"io"
	"net/http"
	"strings"
)

// ErrTooLarge is what reading a body past its bound returns.
var ErrTooLarge = fmt.Errorf("the answer is larger than %d bytes", MaxBody)

// LimitedTransport refuses a response body past MaxBody bytes: the
// providers' SDKs read a list whole, and a server may send without end. A
// 2xx answer with no content type or text/plain (a small server that never
// set one: Go's sniffer says text/plain for JSON) is handed on as JSON,
// which the SDK parses or says why not; HTML and the like stay refused.
type LimitedTransport struct {
	Base http.RoundTripper
}

// Client is an HTTP client that reads through a LimitedTransport over
// base's transport and keeps base's redirect policy (the host's egress
// rules).
func Client(base *http.Client) *http.Client {
	return &http.Client{Transport: LimitedTransport{Base: base.Transport}, CheckRedirect: base.CheckRedirect}
}

// RoundTrip implements http.RoundTripper.
func (t LimitedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.Base == nil {
		// Never the default transport: a capsule reaches the network only
		// through the host's egress client.
		return nil, fmt.Errorf("modellist: GET %s: no transport", req.URL.Path)
	}
	resp, err := t.Base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{body: resp.Body, left: MaxBody}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode/100 == 2 && (ct == "" || strings.HasPrefix(ct, "text/plain")) {
		resp.Header.Set("Content-Type", "application/json")
	}
	return resp, nil
}

type limitedBody struct {
	body io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, ErrTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.body.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.body.Close() }
