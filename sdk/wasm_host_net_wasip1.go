//go:build wasip1

package sdk

import (
	"runtime"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/abi"
)

//go:wasmimport astrid net_connect
func abiNetConnect(hostPtr, hostLen uint32, port int32) uint64

//go:wasmimport astrid net_bind
func abiNetBind(addrPtr, addrLen uint32) uint64

//go:wasmimport astrid net_accept
func abiNetAccept(listener uint64, timeoutMs int64) uint64

//go:wasmimport astrid net_read
func abiNetRead(stream uint64, maxBytes int64, timeoutMs int64) uint64

//go:wasmimport astrid net_write
func abiNetWrite(stream uint64, dataPtr, dataLen uint32) uint64

//go:wasmimport astrid net_close
func abiNetClose(h uint64) uint64

// NetConnect opens a TCP stream (hostapi.Net).
func (*wasmHost) NetConnect(host string, port int) (hostapi.NetHandle, error) {
	if port < 0 || port > 65535 {
		return 0, hostapi.Errorf(hostapi.CodeInvalid, "net_connect", "port %d is not 1-65535", port)
	}
	p, n := abi.StringPtr(host)
	r := abiNetConnect(p, n, int32(port))
	runtime.KeepAlive(host)
	h, err := u64(result(r))
	return hostapi.NetHandle(h), err
}

// NetBind opens a listener (hostapi.Net).
func (*wasmHost) NetBind(addr string) (hostapi.NetListener, error) {
	return decodeJSON[hostapi.NetListener](call1(abiNetBind, addr))
}

// timeoutMs is a wait's timeout on the wire: 0 (the host's cap) for a
// timeout that is not positive or does not fit.
func timeoutMs(d time.Duration) int64 {
	if d <= 0 || d > hostapi.MaxNetWait {
		return 0
	}
	return max(d.Milliseconds(), 1)
}

// NetAccept waits for a connection on a listener (hostapi.Net).
func (*wasmHost) NetAccept(listener hostapi.NetHandle, timeout time.Duration) (hostapi.NetConn, error) {
	return decodeJSON[hostapi.NetConn](result(abiNetAccept(uint64(listener), timeoutMs(timeout))))
}

// NetRead reads at most max bytes from a stream (hostapi.Net).
func (*wasmHost) NetRead(stream hostapi.NetHandle, max int, timeout time.Duration) ([]byte, error) {
	return result(abiNetRead(uint64(stream), int64(max), timeoutMs(timeout)))
}

// NetWrite writes data to a stream (hostapi.Net).
func (*wasmHost) NetWrite(stream hostapi.NetHandle, data []byte) error {
	p, n := abi.BytesPtr(data)
	r := abiNetWrite(uint64(stream), p, n)
	runtime.KeepAlive(data)
	_, err := result(r)
	return err
}

// NetClose closes a stream or listener (hostapi.Net).
func (*wasmHost) NetClose(h hostapi.NetHandle) error {
	_, err := result(abiNetClose(uint64(h)))
	return err
}
