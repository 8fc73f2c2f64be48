package host

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/egress"
)

// netDialer is the capsule's egress dialer: net_connect, then the SSRF
// guard on every resolved address, then the connect.
func (c *Capsule) netDialer() (*egress.Dialer, error) {
	t := &c.nets
	t.dialOnce.Do(func() {
		eo := c.deps.Egress
		eo.CheckHost = nil
		eo.CheckConn = c.gate.NetConnect
		eo.Timeout = hostapi.NetConnectTimeout
		if eo.Logger == nil {
			eo.Logger = c.log
		}
		t.dialer, t.dialErr = egress.NewDialer(eo)
	})
	return t.dialer, t.dialErr
}

// NetConnect implements hostapi.Net.
func (call *Call) NetConnect(hostname string, port int) (hostapi.NetHandle, error) {
	defer call.leave(call.enter(opNetConnect))
	const op = "net_connect"
	if err := call.live(op); err != nil {
		return 0, err
	}
	if port < 1 || port > 65535 {
		return 0, hostapi.Errorf(hostapi.CodeInvalid, op, "port %d is not 1-65535", port)
	}
	if hostname == "" || len(hostname) > 253 || strings.ContainsAny(hostname, "\x00/ ") {
		return 0, hostapi.Errorf(hostapi.CodeInvalid, op, "host %q is not a host name or address", hostname)
	}
	d, err := call.c.netDialer()
	if err != nil {
		return 0, hostapi.Errorf(hostapi.CodeInternal, op, "%v", err)
	}
	if err := call.c.nets.reserve(op); err != nil {
		return 0, err
	}
	conn, err := d.DialContext(call.ctx, "tcp", net.JoinHostPort(strings.Trim(hostname, "[]"), strconv.Itoa(port)))
	if err != nil {
		call.c.nets.release()
		return 0, call.dialError(op, err)
	}
	return call.c.nets.add(op, &netHandle{principal: call.principal, conn: conn})
}

// dialError classifies an egress refusal or a failed connect.
func (call *Call) dialError(op string, err error) error {
	switch {
	case errors.Is(err, egress.ErrDenied), errors.Is(err, egress.ErrForbiddenAddress):
		return hostapi.Errorf(hostapi.CodeDenied, op, "%v", err)
	case errors.Is(err, egress.ErrInvalidAddress):
		return hostapi.Errorf(hostapi.CodeInvalid, op, "%v", err)
	}
	if lerr := call.live(op); lerr != nil {
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

// NetBind implements hostapi.Net.
func (call *Call) NetBind(addr string) (hostapi.NetListener, error) {
	defer call.leave(call.enter(opNetBind))
	const op = "net_bind"
	if err := call.live(op); err != nil {
		return hostapi.NetListener{}, err
	}
	if err := call.c.gate.NetBind(addr); err != nil {
		return hostapi.NetListener{}, hostapi.Errorf(hostapi.CodeDenied, op, "%v", err)
	}
	if resolved := call.c.gate.ResolveBind(addr); resolved != addr {
		// run://: the kernel's own directory, made private if missing.
		addr = resolved
		if err := os.MkdirAll(call.c.gate.RunDir(), 0o700); err != nil {
			return hostapi.NetListener{}, hostapi.Errorf(hostapi.CodeIO, op, "run directory: %v", err)
		}
	}
	if err := call.c.nets.reserve(op); err != nil {
		return hostapi.NetListener{}, err
	}
	h := &netHandle{principal: call.principal}
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
		call.c.nets.release()
		return hostapi.NetListener{}, err
	}
	id, err := call.c.nets.add(op, h)
	if err != nil {
		return hostapi.NetListener{}, err
	}
	call.c.log.Info("net: listening", "principal", call.principal, "addr", bound, "handle", id)
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

// wait is a network wait's timeout: timeout, or MaxNetWait when it is not
// positive or larger.
func netWait(timeout time.Duration) time.Duration {
	if timeout <= 0 || timeout > hostapi.MaxNetWait {
		return hostapi.MaxNetWait
	}
	return timeout
}

// deadliner is a listener a wait can set a deadline on.
type deadliner interface{ SetDeadline(time.Time) error }

// waitOn bounds a wait by timeout through its deadline setter and ends it early when the call is
// cancelled (or its deadline passes): the deadline is moved to the past,
// which wakes the blocked read, write or accept. The returned func undoes
// the watch.
func (call *Call) waitOn(set func(time.Time) error, timeout time.Duration) func() {
	_ = set(time.Now().Add(timeout))
	fired := make(chan struct{})
	stop := context.AfterFunc(call.ctx, func() {
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
func (call *Call) waitError(op string, h hostapi.NetHandle, timeout time.Duration, err error) error {
	if lerr := call.live(op); lerr != nil {
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

// NetAccept implements hostapi.Net.
func (call *Call) NetAccept(listener hostapi.NetHandle, timeout time.Duration) (hostapi.NetConn, error) {
	defer call.leave(call.enter(opNetAccept))
	const op = "net_accept"
	if err := call.live(op); err != nil {
		return hostapi.NetConn{}, err
	}
	h, err := call.c.nets.get(op, listener, call.principal)
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
	if err := call.c.nets.reserve(op); err != nil {
		return hostapi.NetConn{}, err
	}
	timeout = netWait(timeout)
	unwatch := call.waitOn(d.SetDeadline, timeout)
	conn, err := h.ln.Accept()
	unwatch()
	if err != nil {
		call.c.nets.release()
		return hostapi.NetConn{}, call.waitError(op, listener, timeout, err)
	}
	peer := hostapi.NetPeer{UID: -1, PID: -1}
	if uc, ok := conn.(*net.UnixConn); ok {
		peer.UID, peer.PID = peerCred(uc)
	} else {
		peer.Addr = conn.RemoteAddr().String()
	}
	id, err := call.c.nets.add(op, &netHandle{principal: call.principal, conn: conn})
	if err != nil {
		return hostapi.NetConn{}, err
	}
	return hostapi.NetConn{Handle: id, Peer: peer}, nil
}

// stream finds a stream handle of the call's principal.
func (call *Call) stream(op string, id hostapi.NetHandle) (net.Conn, error) {
	if err := call.live(op); err != nil {
		return nil, err
	}
	h, err := call.c.nets.get(op, id, call.principal)
	if err != nil {
		return nil, err
	}
	if h.conn == nil {
		return nil, hostapi.Errorf(hostapi.CodeInvalid, op, "handle %d is a listener, not a stream", id)
	}
	return h.conn, nil
}

// NetRead implements hostapi.Net.
func (call *Call) NetRead(stream hostapi.NetHandle, max int, timeout time.Duration) ([]byte, error) {
	defer call.leave(call.enter(opNetRead))
	const op = "net_read"
	conn, err := call.stream(op, stream)
	if err != nil {
		return nil, err
	}
	if max <= 0 {
		return nil, hostapi.Errorf(hostapi.CodeInvalid, op, "max %d is not positive", max)
	}
	// A huge max costs the host nothing: the buffer is the cap at most.
	buf := make([]byte, min(max, hostapi.MaxNetRead))
	timeout = netWait(timeout)
	unwatch := call.waitOn(conn.SetReadDeadline, timeout)
	n, err := conn.Read(buf)
	unwatch()
	if n > 0 {
		return buf[:n], nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return nil, call.waitError(op, stream, timeout, err)
}

// NetWrite implements hostapi.Net.
func (call *Call) NetWrite(stream hostapi.NetHandle, data []byte) error {
	defer call.leave(call.enter(opNetWrite))
	const op = "net_write"
	if len(data) > hostapi.MaxNetWrite {
		return hostapi.Errorf(hostapi.CodeTooLarge, op, "%d bytes is over the %d-byte limit of one write", len(data), hostapi.MaxNetWrite)
	}
	conn, err := call.stream(op, stream)
	if err != nil {
		return err
	}
	unwatch := call.waitOn(conn.SetWriteDeadline, hostapi.MaxNetWait)
	_, err = conn.Write(data)
	unwatch()
	if err != nil {
		return call.waitError(op, stream, hostapi.MaxNetWait, err)
	}
	return nil
}

// NetClose implements hostapi.Net. It works after the call was cancelled:
// giving back a handle is always allowed.
func (call *Call) NetClose(h hostapi.NetHandle) error {
	defer call.leave(call.enter(opNetClose))
	const op = "net_close"
	nh, err := call.c.nets.remove(op, h, call.principal)
	if err != nil {
		return err
	}
	if err := nh.close(); err != nil && !errors.Is(err, net.ErrClosed) {
		return hostapi.Errorf(hostapi.CodeIO, op, "handle %d: %v", h, err)
	}
	return nil
}
