package admin

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Options configure a server.
type Options struct {
	// Listen is the loopback "host:port" to listen on (CheckListen); port
	// 0 takes any free one.
	Listen string
	Logger *slog.Logger
}

// Server is the admin HTTP server. Every request passes the checks of
// guard before the handler mounted for its path sees it.
type Server struct {
	log    *slog.Logger
	ln     net.Listener
	http   *http.Server
	mux    *http.ServeMux
	token  string
	cookie string // the token cookie's name, per port
	// hosts are the Host header values that name this server, lower case;
	// origins the Origin values of its own pages.
	hosts   map[string]bool
	origins map[string]bool

	// stop ends every request's context (server-sent event streams that
	// would otherwise keep Shutdown waiting).
	stop      context.CancelFunc
	serveDone chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// tokenBytes is the token's entropy: 256 bits.
const tokenBytes = 32

// New listens on opts.Listen, refused unless it is loopback, and makes the
// run's token. Serve starts answering.
func New(opts Options) (*Server, error) {
	if err := CheckListen(opts.Listen); err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	raw := make([]byte, tokenBytes)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("admin: token: %w", err)
	}
	ln, err := net.Listen("tcp", bindAddr(opts.Listen))
	if err != nil {
		return nil, fmt.Errorf("admin: listen: %w", err)
	}
	tcp := ln.Addr().(*net.TCPAddr)
	if !tcp.IP.IsLoopback() {
		// CheckListen allows nothing else; this guards a resolver or
		// kernel that thinks otherwise.
		ln.Close()
		return nil, fmt.Errorf("admin: listening on %s, which is not loopback", tcp)
	}
	s := &Server{
		log: log, ln: ln, mux: http.NewServeMux(),
		token:  base64.RawURLEncoding.EncodeToString(raw),
		cookie: fmt.Sprintf("astrid_admin_%d", tcp.Port),
		hosts:  map[string]bool{}, origins: map[string]bool{},
		serveDone: make(chan struct{}),
	}
	for _, h := range []string{tcp.IP.String(), "localhost"} {
		hostPort := strings.ToLower(net.JoinHostPort(h, fmt.Sprint(tcp.Port)))
		s.hosts[hostPort] = true
		s.origins["http://"+hostPort] = true
		if tcp.Port == 80 { // a browser leaves the default port out
			s.hosts[strings.ToLower(strings.Trim(net.JoinHostPort(h, ""), ":"))] = true
		}
	}
	ctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	s.http = &http.Server{
		Handler:           s.guard(s.mux),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       time.Minute,
		MaxHeaderBytes:    16 << 10,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	return s, nil
}

// Handle mounts h at pattern (http.ServeMux syntax) behind the server's
// checks: the one place the web view, the metrics and whatever comes next
// are plugged in. It may be called before or after Serve.
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// Serve answers requests in the background until Close.
func (s *Server) Serve() {
	go func() {
		defer close(s.serveDone)
		if err := s.http.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Warn("admin server stopped", "err", err)
		}
	}()
}

// Addr is the address the server listens on (its port chosen when 0 was
// asked for).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// BaseURL is the server's root URL, without the token.
func (s *Server) BaseURL() string { return "http://" + s.Addr() + "/" }

// TokenURL is the URL a person opens: the root with the token, which the
// first request trades for a cookie.
func (s *Server) TokenURL() string {
	return s.BaseURL() + "?" + url.Values{tokenParam: {s.token}}.Encode()
}

// Token is the run's token.
func (s *Server) Token() string { return s.token }

// Close stops the server: the requests still running (event streams) see
// their contexts end, then it waits for them, up to ctx. A Server never
// served closes its listener. It is idempotent.
func (s *Server) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		s.stop()
		err := s.http.Shutdown(ctx)
		if err != nil {
			err = errors.Join(err, s.http.Close())
		}
		// Shutdown closes only the listeners Serve was given.
		if cerr := s.ln.Close(); cerr != nil && !errors.Is(cerr, net.ErrClosed) {
			err = errors.Join(err, cerr)
		}
		if err != nil {
			s.closeErr = fmt.Errorf("admin: close: %w", err)
		}
	})
	return s.closeErr
}
