package host

import "net/http"

// SessionHTTPClient is the capsule's HTTP client for a connection the host
// keeps open on the capsule's behalf across calls, such as a remote MCP
// server's session (internal/engine/mcp): the egress rules of HTTPClient
// (the `net` gate on every request and redirect hop, the SSRF guard on
// every address connected, no proxy, the operator's own URLs among the
// capsule's [env] values), without a per-call scope. Requests must carry
// a context that ends them; it has no whole-request timeout shorter than a
// day. It is not part of hostapi.
func (c *Capsule) SessionHTTPClient() (*http.Client, error) { return c.streamingClient() }
