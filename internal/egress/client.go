package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"time"
)

// NewClient builds the HTTP client for a capsule's `net` grant. Every request
// and every redirect hop has its scheme (http or https) and host checked with
// Options.CheckHost; an IP-literal host is refused before connecting if
// CheckAddr would refuse it; connections go only to resolved addresses that
// pass the allowlist or CheckAddr; no proxy is ever used, whatever the
// environment says; at most MaxRedirects redirects are followed.
// Options.CheckHost is required.
func NewClient(opts Options) (*http.Client, error) {
	if opts.CheckHost == nil {
		return nil, errors.New("egress: NewClient needs Options.CheckHost (the net gate)")
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	g, err := newGuard(opts, min(timeout, DefaultConnectTimeout))
	if err != nil {
		return nil, err
	}
	p := &hopPolicy{g: g, checkHost: opts.CheckHost}
	transport := &http.Transport{
		Proxy:                  nil, // never from the environment: a proxy would connect for us, unchecked
		DialContext:            p.dial,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    DefaultConnectTimeout,
		MaxIdleConns:           16,
		IdleConnTimeout:        90 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 1 << 20,
	}
	return &http.Client{
		Transport:     &checkedTransport{policy: p, next: transport},
		CheckRedirect: p.checkRedirect,
		Timeout:       timeout,
	}, nil
}

// hopPolicy is what every HTTP hop must satisfy.
type hopPolicy struct {
	g         *guard
	checkHost func(host string) error
}

// check applies the scheme rule, the `net` gate and, for an IP literal, the
// address check, to one request URL sent under ctx.
func (p *hopPolicy) check(ctx context.Context, method string, u *url.URL) error {
	if u == nil {
		return fmt.Errorf("egress: %s without URL: %w", method, ErrInvalidAddress)
	}
	shown := u.Redacted()
	port := uint16(80)
	switch u.Scheme {
	case "http":
	case "https":
		port = 443
	default:
		return fmt.Errorf("egress: %s %s: scheme %q is not http or https: %w", method, shown, u.Scheme, ErrDenied)
	}
	if u.User != nil {
		// Credentials in a URL end up in logs, in a model's context and in
		// the "what did the agent fetch" a person reviews; and a URL such
		// as http://trusted.example@evil.example/ reads as a host it is
		// not. A capsule that authenticates sends a header.
		return fmt.Errorf("egress: %s %s: a URL with userinfo (user@ or user:password@) is refused; send credentials in a header: %w", method, shown, ErrDenied)
	}
	host, err := NormalizeHost(u.Hostname())
	if err != nil {
		return fmt.Errorf("egress: %s %s: %w", method, shown, err)
	}
	if text := u.Port(); text != "" {
		if port, err = parsePort(text); err != nil {
			return fmt.Errorf("egress: %s %s: %w", method, shown, err)
		}
	}
	if err := p.checkHost(host); err != nil {
		p.g.log.Warn("egress: request denied by net", "method", method, "url", shown, "host", host, "reason", err)
		return fmt.Errorf("egress: %s %s: %w by net: %w", method, shown, ErrDenied, err)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		// Refused here so the error names the URL; the dialer would refuse it
		// too. A local address the person may consent to is the dialer's to
		// ask about.
		if err := p.g.permit(ip, port); err != nil && (!consentable(ip) || consentOf(ctx) == nil) {
			p.g.log.Warn("egress: request refused", "method", method, "url", shown, "reason", err)
			return fmt.Errorf("egress: %s %s: %w", method, shown, err)
		}
	}
	return nil
}

func (p *hopPolicy) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= MaxRedirects {
		return fmt.Errorf("egress: %s %s: stopped after %d redirects: %w", req.Method, req.URL.Redacted(), MaxRedirects, ErrDenied)
	}
	return p.check(req.Context(), req.Method, req.URL)
}

// dial is the transport's only way out. With Proxy nil the address is the
// request URL's host, which check already passed through the gate.
func (p *hopPolicy) dial(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := splitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("egress: dial %s %q: %w", network, address, err)
	}
	return p.g.connect(ctx, network, host, port)
}

// checkedTransport runs the hop policy on every request the client sends,
// the first one included (CheckRedirect only sees the later hops).
type checkedTransport struct {
	policy *hopPolicy
	next   *http.Transport
}

func (t *checkedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.policy.check(req.Context(), req.Method, req.URL); err != nil {
		if req.Body != nil {
			_ = req.Body.Close() // RoundTrip owns the body, even on error
		}
		return nil, err
	}
	return t.next.RoundTrip(req)
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the pool.
func (t *checkedTransport) CloseIdleConnections() { t.next.CloseIdleConnections() }
