package netio

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/egress"
)

// Caller is the host call a network operation runs for: the principal
// whose handles it may use, and the call's context, whose end ends a
// wait at once.
type Caller struct {
	Principal string
	Ctx       context.Context
	// Ended is the call's error for op once Ctx has ended (cancelled, its
	// deadline passed), nil while it runs.
	Ended func(op string) error
}

// Connect opens a TCP stream to hostname:port for c through the dialer
// dialer returns, the capsule's egress dialer (net_connect, then the SSRF
// guard on every resolved address), and returns its handle.
func (t *Table) Connect(c Caller, op string, dialer func() (*egress.Dialer, error), hostname string, port int) (hostapi.NetHandle, error) {
	if err := c.Ended(op); err != nil {
		return 0, err
	}
	if port < 1 || port > 65535 {
		return 0, hostapi.Errorf(hostapi.CodeInvalid, op, "port %d is not 1-65535", port)
	}
	if hostname == "" || len(hostname) > 253 || strings.ContainsAny(hostname, "\x00/ ") {
		return 0, hostapi.Errorf(hostapi.CodeInvalid, op, "host %q is not a host name or address", hostname)
	}
	d, err := dialer()
	if err != nil {
		return 0, hostapi.Errorf(hostapi.CodeInternal, op, "%v", err)
	}
	if err := t.reserve(op); err != nil {
		return 0, err
	}
	conn, err := d.DialContext(c.Ctx, "tcp", net.JoinHostPort(strings.Trim(hostname, "[]"), strconv.Itoa(port)))
	if err != nil {
		t.release()
		return 0, dialError(c, op, err)
	}
	return t.add(op, &handle{principal: c.Principal, conn: conn})
}

// dialError classifies an egress refusal or a failed connect.
func dialError(c Caller, op string, err error) error {
	switch {
	case errors.Is(err, egress.ErrDenied), errors.Is(err, egress.ErrForbiddenAddress):
		return hostapi.Errorf(hostapi.CodeDenied, op, "%v", err)
	case errors.Is(err, egress.ErrInvalidAddress):
		return hostapi.Errorf(hostapi.CodeInvalid, op, "%v", err)
	}
	if lerr := c.Ended(op); lerr != nil {
		return lerr
	}
	if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		return hostapi.Errorf(hostapi.CodeTimeout, op, "no connection within %v: %v", hostapi.NetConnectTimeout, err)
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return hostapi.Errorf(hostapi.CodeUnavailable, op, "%v", err)
	}
	return hostapi.Errorf(hostapi.CodeIO, op, "%v", err)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Bind listens on addr for c and returns the listener's handle: "unix:" and
// an absolute path (bindUnix), or a loopback TCP address. The caller has
// checked that c runs, checked addr against the capsule's net_bind grant
// and resolved run://.
func (t *Table) Bind(c Caller, op, addr string) (hostapi.NetListener, error) {
	if err := t.reserve(op); err != nil {
		return hostapi.NetListener{}, err
	}
	h := &handle{principal: c.Principal}
	var bound string
	var err error
	if p, ok := strings.CutPrefix(addr, "unix:"); ok {
		h.ln, h.cleanup, err = bindUnix(p)
		bound = "unix:" + p
	} else {
		h.ln, err = bindLoopback(addr)
		if err == nil {
			bound = h.ln.Addr().String()
		}
	}
	if err != nil {
		t.release()
		return hostapi.NetListener{}, err
	}
	id, err := t.add(op, h)
	if err != nil {
		return hostapi.NetListener{}, err
	}
	t.log.Info("net: listening", "principal", c.Principal, "addr", bound, "handle", id)
	return hostapi.NetListener{Handle: id, Addr: bound}, nil
}

// bindLoopback listens on a TCP address the gate passed. The gate already
// requires a loopback host; this binds the literal it names (localhost is
// 127.0.0.1, never a resolver's answer) and checks loopback once more, so a
// change to the gate cannot open a public port.
func bindLoopback(addr string) (net.Listener, error) {
	const op = "net_bind"
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, hostapi.Errorf(hostapi.CodeInvalid, op, "%v", err)
	}
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		host = "127.0.0.1"
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.Unmap().IsLoopback() || ip.Zone() != "" {
		return nil, hostapi.Errorf(hostapi.CodeDenied, op, "%s is not a loopback address; TCP binds are loopback only", addr)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip.Unmap().String(), port))
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, hostapi.Errorf(hostapi.CodeExists, op, "%s is in use", addr)
		}
		return nil, hostapi.Errorf(hostapi.CodeIO, op, "%v", err)
	}
	return ln, nil
}

// netWait is a network wait's timeout: timeout, or MaxNetWait when it is
// not positive or larger.
func netWait(timeout time.Duration) time.Duration {
	if timeout <= 0 || timeout > hostapi.MaxNetWait {
		return hostapi.MaxNetWait
	}
	return timeout
}

// deadliner is a listener a wait can set a deadline on.
type deadliner interface{ SetDeadline(time.Time) error }

// waitOn bounds a wait by timeout through its deadline setter and ends it
// early when the call is cancelled (or its deadline passes): the deadline
// is moved to the past, which wakes the blocked read, write or accept. The
// returned func undoes the watch.
func waitOn(ctx context.Context, set func(time.Time) error, timeout time.Duration) func() {
	_ = set(time.Now().Add(timeout))
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		_ = set(time.Unix(1, 0))
		close(fired)
	})
	return func() {
		// If the watch already fired, wait for it: a deadline moved to
		// the past after this returns would cut short the next call's
		// wait on the same socket.
		if !stop() {
			<-fired
		}
	}
}

// waitError turns a failed wait into the call's cancellation, a timeout, or
// the stream's end.
func waitError(c Caller, op string, h hostapi.NetHandle, timeout time.Duration, err error) error {
	if lerr := c.Ended(op); lerr != nil {
		return lerr
	}
	switch {
	case isTimeout(err):
		return hostapi.Errorf(hostapi.CodeTimeout, op, "nothing on handle %d within %v", h, timeout)
	case errors.Is(err, io.EOF):
		return hostapi.Errorf(hostapi.CodeClosed, op, "the peer closed handle %d", h)
	case errors.Is(err, net.ErrClosed):
		return hostapi.Errorf(hostapi.CodeClosed, op, "handle %d was closed", h)
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return hostapi.Errorf(hostapi.CodeClosed, op, "the peer reset handle %d: %v", h, err)
	}
	return hostapi.Errorf(hostapi.CodeIO, op, "handle %d: %v", h, err)
}

// Accept takes the next connection on c's listener, waiting at most
// timeout (MaxNetWait when not positive or larger), and returns its handle
// with what is known of the peer.
func (t *Table) Accept(c Caller, op string, listener hostapi.NetHandle, timeout time.Duration) (hostapi.NetConn, error) {
	if err := c.Ended(op); err != nil {
		return hostapi.NetConn{}, err
	}
	h, err := t.get(op, listener, c.Principal)
	if err != nil {
		return hostapi.NetConn{}, err
	}
	if h.ln == nil {
		return hostapi.NetConn{}, hostapi.Errorf(hostapi.CodeInvalid, op, "handle %d is a stream, not a listener", listener)
	}
	d, ok := h.ln.(deadliner)
	if !ok {
		return hostapi.NetConn{}, hostapi.Errorf(hostapi.CodeInternal, op, "listener %d cannot time out", listener)
	}
	// A slot first: at the limit the connection stays in the backlog
	// rather than being accepted and dropped.
	if err := t.reserve(op); err != nil {
		return hostapi.NetConn{}, err
	}
	timeout = netWait(timeout)
	unwatch := waitOn(c.Ctx, d.SetDeadline, timeout)
	conn, err := h.ln.Accept()
	unwatch()
	if err != nil {
		t.release()
		return hostapi.NetConn{}, waitError(c, op, listener, timeout, err)
	}
	peer := hostapi.NetPeer{UID: -1, PID: -1}
	if uc, ok := conn.(*net.UnixConn); ok {
		peer.UID, peer.PID = peerCred(uc)
	} else {
		peer.Addr = conn.RemoteAddr().String()
	}
	id, err := t.add(op, &handle{principal: c.Principal, conn: conn})
	if err != nil {
		return hostapi.NetConn{}, err
	}
	return hostapi.NetConn{Handle: id, Peer: peer}, nil
}

// stream finds a stream handle of c's principal, while c runs.
func (t *Table) stream(c Caller, op string, id hostapi.NetHandle) (net.Conn, error) {
	if err := c.Ended(op); err != nil {
		return nil, err
	}
	h, err := t.get(op, id, c.Principal)
	if err != nil {
		return nil, err
	}
	if h.conn == nil {
		return nil, hostapi.Errorf(hostapi.CodeInvalid, op, "handle %d is a listener, not a stream", id)
	}
	return h.conn, nil
}

// Read returns what arrived on c's stream, at most max bytes (and
// MaxNetRead), waiting at most timeout for something.
func (t *Table) Read(c Caller, op string, stream hostapi.NetHandle, max int, timeout time.Duration) ([]byte, error) {
	conn, err := t.stream(c, op, stream)
	if err != nil {
		return nil, err
	}
	if max <= 0 {
		return nil, hostapi.Errorf(hostapi.CodeInvalid, op, "max %d is not positive", max)
	}
	// A huge max costs the host nothing: the buffer is the cap at most.
	buf := make([]byte, min(max, hostapi.MaxNetRead))
	timeout = netWait(timeout)
	unwatch := waitOn(c.Ctx, conn.SetReadDeadline, timeout)
	n, err := conn.Read(buf)
	unwatch()
	if n > 0 {
		return buf[:n], nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return nil, waitError(c, op, stream, timeout, err)
}

// Write writes data, at most MaxNetWrite bytes, to c's stream.
func (t *Table) Write(c Caller, op string, stream hostapi.NetHandle, data []byte) error {
	if len(data) > hostapi.MaxNetWrite {
		return hostapi.Errorf(hostapi.CodeTooLarge, op, "%d bytes is over the %d-byte limit of one write", len(data), hostapi.MaxNetWrite)
	}
	conn, err := t.stream(c, op, stream)
	if err != nil {
		return err
	}
	unwatch := waitOn(c.Ctx, conn.SetWriteDeadline, hostapi.MaxNetWait)
	_, err = conn.Write(data)
	unwatch()
	if err != nil {
		return waitError(c, op, stream, hostapi.MaxNetWait, err)
	}
	return nil
}

// Close closes principal's handle h; giving back a handle is allowed
// whatever state the call is in.
func (t *Table) Close(op, principal string, h hostapi.NetHandle) error {
	nh, err := t.remove(op, h, principal)
	if err != nil {
		return err
	}
	if err := nh.close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return hostapi.Errorf(hostapi.CodeIO, op, "handle %d: %v", h, err)
	}
	return nil
}
