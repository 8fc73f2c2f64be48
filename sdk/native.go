//go:build !wasip1

package sdk

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/astrid-go/astrid/hostapi"
)

// The two accessors below exist for built-in capsules that run natively and
// drive a Go library which needs them (the LLM providers' official SDKs,
// DESIGN §4): a context that ends with the call, and an HTTP client that
// streams. They are not part of hostapi: a wasm guest cannot use either, and
// a capsule that calls them is native-only.

// Context is the call's context: it ends when the call does (its deadline,
// a cancel naming its key, the capsule's unload). Pass it to every request
// a library makes on the call's behalf. A host without one (a unit test's
// fake) gives context.Background.
func (c *Call) Context() context.Context {
	if h, ok := c.Host.(interface{ Context() context.Context }); ok {
		return h.Context()
	}
	return context.Background()
}

// HTTPClient is an HTTP client under the capsule's grants for a library
// that streams responses: every request and redirect hop is checked against
// the manifest's `net` grant and the SSRF guard (no loopback or private
// address, no proxy), except that a URL the operator set as one of the
// capsule's [env] values allows exactly that scheme, host and port (a local
// model server). It has no overall timeout: requests must carry Context.
// Time spent waiting on the network is not charged as the capsule's CPU.
func (c *Call) HTTPClient() (*http.Client, error) {
	h, ok := c.Host.(interface{ HTTPClient() (*http.Client, error) })
	if !ok {
		return nil, hostapi.Errorf(hostapi.CodeNotSupported, "http_client", "this host offers no streaming HTTP client")
	}
	return h.HTTPClient()
}

// RetryAfter reads the wait an HTTP answer asks for before a retry:
// Retry-After-Ms (OpenAI's and Anthropic's, milliseconds), else Retry-After
// in seconds or as an HTTP date (measured from now); ok is false when
// neither is present and readable.
func RetryAfter(h http.Header, now time.Time) (wait time.Duration, ok bool) {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
		return time.Duration(secs * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, t.Sub(now)), true
	}
	return 0, false
}
