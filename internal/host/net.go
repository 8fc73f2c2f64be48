package host

import (
	"os"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/egress"
	"github.com/astrid-go/astrid/internal/host/netio"
)

// netDialer is the capsule's egress dialer: net_connect, then the SSRF
// guard on every resolved address, then the connect. It is built once.
func (c *Capsule) netDialer() (*egress.Dialer, error) {
	c.dialOnce.Do(func() {
		eo := c.deps.Egress
		eo.CheckHost = nil
		eo.CheckConn = c.gate.NetConnect
		eo.Timeout = hostapi.NetConnectTimeout
		if eo.Logger == nil {
			eo.Logger = c.log
		}
		c.dialer, c.dialErr = egress.NewDialer(eo)
	})
	return c.dialer, c.dialErr
}

// netCaller is the call as internal/host/netio serves it.
func (call *Call) netCaller() netio.Caller {
	return netio.Caller{Principal: call.principal, Ctx: call.ctx, Ended: call.live}
}

// NetConnect implements hostapi.Net: the stream is internal/host/netio's.
func (call *Call) NetConnect(hostname string, port int) (hostapi.NetHandle, error) {
	defer call.leave(call.enter(opNetConnect))
	nc := call.netCaller()
	nc.Ctx = call.egressCtx() // a local address may be put to the person
	return call.c.nets.Connect(nc, "net_connect", call.c.netDialer, hostname, port)
}

// NetBind implements hostapi.Net: addr is checked against net_bind here,
// bound by internal/host/netio.
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
	return call.c.nets.Bind(call.netCaller(), op, addr)
}

// NetAccept implements hostapi.Net.
func (call *Call) NetAccept(listener hostapi.NetHandle, timeout time.Duration) (hostapi.NetConn, error) {
	defer call.leave(call.enter(opNetAccept))
	return call.c.nets.Accept(call.netCaller(), "net_accept", listener, timeout)
}

// NetRead implements hostapi.Net.
func (call *Call) NetRead(stream hostapi.NetHandle, max int, timeout time.Duration) ([]byte, error) {
	defer call.leave(call.enter(opNetRead))
	return call.c.nets.Read(call.netCaller(), "net_read", stream, max, timeout)
}

// NetWrite implements hostapi.Net.
func (call *Call) NetWrite(stream hostapi.NetHandle, data []byte) error {
	defer call.leave(call.enter(opNetWrite))
	return call.c.nets.Write(call.netCaller(), "net_write", stream, data)
}

// NetClose implements hostapi.Net. It works after the call was cancelled:
// giving back a handle is always allowed.
func (call *Call) NetClose(h hostapi.NetHandle) error {
	defer call.leave(call.enter(opNetClose))
	return call.c.nets.Close("net_close", call.principal, h)
}
