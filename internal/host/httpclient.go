package host

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/astrid-go/astrid/internal/egress"
)

// streamTimeout bounds a whole streamed request of the native HTTP client;
// the call's context (its deadline and cancel key) ends it sooner.
const streamTimeout = 24 * time.Hour

// Context is the call's context: it ends with the call (its deadline, its
// cancel key, the capsule's unload). Native code that drives a library
// taking a context (an LLM SDK) passes it, so the library stops with the
// call. It is not part of hostapi: a wasm guest has no use for it.
func (call *Call) Context() context.Context { return call.ctx }

// HTTPClient is the capsule's HTTP client for native code that drives an
// SDK which streams (the LLM providers; DESIGN §4): the same egress rules as
// HTTPDo — the `net` gate on every request and redirect hop, the SSRF guard
// on every address actually connected, no proxy — plus the operator's own
// URLs: every [env] value of the capsule that is an absolute http(s) URL
// allows exactly that scheme, host and port, even on a loopback or private
// address (a local model server the operator pointed the capsule at). It
// has no whole-request timeout (requests must carry the call's Context);
// the time spent connecting and reading bodies counts as waiting, not as
// the capsule's CPU. It is not part of hostapi: a wasm guest cannot stream.
//
// A URL the call's request scope sets for one of the capsule's keys (a
// client's OPENAI_BASE_URL, scope.go) is allowed for this call as the
// operator's own would be.
func (call *Call) HTTPClient() (*http.Client, error) {
	allow := call.c.urlAllowances()
	var base *http.Client
	var err error
	if extra := call.scopeURLs(); len(extra) > 0 {
		allow.add(extra)
		base, err = call.scopedStreamingClient(allow)
	} else {
		base, err = call.c.streamingClient()
	}
	if err != nil {
		return nil, err
	}
	return &http.Client{
		Transport:     &waitingTransport{call: call, base: base.Transport, allow: allow},
		CheckRedirect: base.CheckRedirect,
		Timeout:       base.Timeout,
	}, nil
}

// streamingClient builds the capsule's streaming egress client once.
func (c *Capsule) streamingClient() (*http.Client, error) {
	c.streamOnce.Do(func() {
		c.stream, c.streamErr = c.newStreamingClient(c.urlAllowances())
	})
	return c.stream, c.streamErr
}

// newStreamingClient builds a streaming egress client allowing allow.
func (c *Capsule) newStreamingClient(allow urlAllowances) (*http.Client, error) {
	opts := c.deps.Egress
	opts.Timeout = streamTimeout
	opts.Logger = c.log
	opts.AllowLocal = append(append([]string(nil), opts.AllowLocal...), allow.local()...)
	opts.CheckHost = func(host string) error {
		if err := c.gate.Net(host); err != nil {
			if allow.hasHost(host) {
				return nil
			}
			return err
		}
		return nil
	}
	opts.CheckConn = c.gate.NetConnect
	return egress.NewClient(opts)
}

// urlAllowances are the operator-set URLs among the capsule's [env] values.
type urlAllowances map[string]string // "host:port" (normalised host) → scheme

func (c *Capsule) urlAllowances() urlAllowances {
	out := urlAllowances{}
	for _, v := range c.config {
		out.add([]string{v})
	}
	return out
}

// add allows the http(s) URLs among values.
func (a urlAllowances) add(values []string) {
	for _, v := range values {
		u, err := url.Parse(strings.TrimSpace(v))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			continue
		}
		if hp, ok := hostPort(u); ok {
			a[hp] = u.Scheme
		}
	}
}

// hostPort is u's normalised host and its port (the scheme's default when
// none is written).
func hostPort(u *url.URL) (string, bool) {
	host, err := egress.NormalizeHost(u.Hostname())
	if err != nil {
		return "", false
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return net.JoinHostPort(host, port), true
}

func (a urlAllowances) hasHost(host string) bool {
	for hp := range a {
		if h, _, _ := net.SplitHostPort(hp); h == host {
			return true
		}
	}
	return false
}

// local is the allowances as egress AllowLocal entries.
func (a urlAllowances) local() []string {
	out := make([]string, 0, len(a))
	for hp := range a {
		if egress.CheckAllowLocal(hp) == nil {
			out = append(out, hp)
		}
	}
	return out
}

// waitingTransport times the transport and the body reads of a call's
// requests as waiting (methods.go), and holds an operator-set URL's host to
// its scheme and port: the allowance is for that endpoint, not for the
// host's other ports or a plain-text downgrade.
type waitingTransport struct {
	call  *Call
	base  http.RoundTripper
	allow urlAllowances
}

func (t *waitingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.call.live("http"); err != nil {
		return nil, err
	}
	if err := t.checkAllowance(req.URL); err != nil {
		return nil, err
	}
	start := t.call.enter(opHTTPDo)
	resp, err := t.base.RoundTrip(req)
	t.call.leave(start)
	if err != nil {
		return nil, err
	}
	resp.Body = &waitingBody{call: t.call, body: resp.Body}
	return resp, nil
}

// checkAllowance refuses a request to the host of an operator-set URL on
// another port or scheme, unless the capsule's `net` grant allows the host
// by itself.
func (t *waitingTransport) checkAllowance(u *url.URL) error {
	host, err := egress.NormalizeHost(u.Hostname())
	if err != nil || !t.allow.hasHost(host) || t.call.c.gate.Net(host) == nil {
		return nil // the egress client decides
	}
	hp, _ := hostPort(u)
	if scheme, ok := t.allow[hp]; !ok || scheme != u.Scheme {
		return fmt.Errorf("host: %s://%s: %w: only the operator-set URL's scheme and port of this host are allowed", u.Scheme, hp, egress.ErrDenied)
	}
	return nil
}

type waitingBody struct {
	call *Call
	body io.ReadCloser
}

func (b *waitingBody) Read(p []byte) (int, error) {
	defer b.call.leave(b.call.enter(opHTTPDo))
	return b.body.Read(p)
}

func (b *waitingBody) Close() error { return b.body.Close() }
