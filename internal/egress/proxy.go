package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"sync"
	"time"
)

// Proxy is the loopback HTTP proxy a confined process reaches the network
// through (DESIGN §11): the OS lets the process connect to its port and
// nowhere else, and every CONNECT tunnel and plain-HTTP request it makes is
// dialled by a Dialer, so the capsule's grant and the SSRF guard apply to
// each, name by name and address by address. One Proxy serves one process.
type Proxy struct {
	ln   net.Listener
	srv  *http.Server
	log  *slog.Logger
	d    *Dialer
	wg   sync.WaitGroup
	mu   sync.Mutex
	tuns map[net.Conn]struct{}
}

// NewProxy listens on 127.0.0.1 (a free port) and serves until Close.
func NewProxy(d *Dialer, log *slog.Logger) (*Proxy, error) {
	if log == nil {
		log = slog.Default()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("egress proxy: listen: %w", err)
	}
	p := &Proxy{ln: ln, log: log, d: d, tuns: map[net.Conn]struct{}{}}
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		TLSHandshakeTimeout:   DefaultConnectTimeout,
		ResponseHeaderTimeout: DefaultRequestTimeout,
		MaxIdleConns:          4,
		IdleConnTimeout:       30 * time.Second,
	}
	forward := &httputil.ReverseProxy{
		// A proxy request's URL is absolute already: sent on as it is.
		Rewrite:   func(*httputil.ProxyRequest) {},
		Transport: transport,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			p.refuse(w, r.Host, err)
		},
	}
	p.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.Method == http.MethodConnect:
				p.tunnel(w, r)
			case r.URL.IsAbs() && r.URL.Scheme == "http":
				forward.ServeHTTP(w, r)
			default:
				http.Error(w, "astrid egress proxy: send absolute http:// URLs or CONNECT host:port", http.StatusBadRequest)
			}
		}),
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		_ = p.srv.Serve(ln)
	}()
	return p, nil
}

// Port is the loopback port the proxy listens on.
func (p *Proxy) Port() uint16 { return uint16(p.ln.Addr().(*net.TCPAddr).Port) }

// URL is the proxy's address as HTTP_PROXY takes it.
func (p *Proxy) URL() string { return "http://" + p.ln.Addr().String() }

// Close stops the proxy and every tunnel it holds, and waits for them.
func (p *Proxy) Close() error {
	err := p.srv.Close()
	p.mu.Lock()
	for c := range p.tuns {
		_ = c.Close()
	}
	p.tuns = nil
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

// tunnel serves CONNECT host:port: dialled through the Dialer, then bytes
// both ways until either side closes.
func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), DefaultConnectTimeout)
	up, err := p.d.DialContext(ctx, "tcp", r.Host)
	cancel()
	if err != nil {
		p.refuse(w, r.Host, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "astrid egress proxy: cannot tunnel", http.StatusInternalServerError)
		return
	}
	down, rw, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if _, err := io.WriteString(down, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		up.Close()
		down.Close()
		return
	}
	if !p.hold(up, down) {
		return
	}
	p.wg.Add(2)
	pipe := func(dst net.Conn, src io.Reader) {
		defer p.wg.Done()
		_, _ = io.Copy(dst, src)
		// Half-close where the connection allows it, so a reply still
		// comes back after the request side is done.
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		} else {
			_ = dst.Close()
		}
	}
	go func() {
		pipe(up, rw) // what the client sent, including bytes already buffered
		p.release(up, down)
	}()
	go pipe(down, up)
}

// hold records a tunnel's two ends so that Close can end it; false when
// the proxy is closing (both are closed then).
func (p *Proxy) hold(a, b net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tuns == nil {
		a.Close()
		b.Close()
		return false
	}
	p.tuns[a], p.tuns[b] = struct{}{}, struct{}{}
	return true
}

func (p *Proxy) release(a, b net.Conn) {
	p.mu.Lock()
	delete(p.tuns, a)
	delete(p.tuns, b)
	p.mu.Unlock()
}

// refuse answers a refused or failed dial with 403 (refused by the grant
// or the SSRF guard) or 502, saying why: the process, and the model
// reading its output, learn which host was refused and by what.
func (p *Proxy) refuse(w http.ResponseWriter, target string, err error) {
	status := http.StatusBadGateway
	if errors.Is(err, ErrDenied) || errors.Is(err, ErrForbiddenAddress) || errors.Is(err, ErrInvalidAddress) {
		status = http.StatusForbidden
	}
	p.log.Info("egress proxy: refused", "target", target, "status", status, "err", err)
	http.Error(w, fmt.Sprintf("astrid egress proxy: %s refused by Astrid's sandbox: %v", target, err), status)
}
