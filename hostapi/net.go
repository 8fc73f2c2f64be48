package hostapi

import "time"

// Net is raw sockets: TCP connections checked against net_connect and the
// egress guard, listeners (a unix socket, or TCP on loopback) checked against
// net_bind. Handles belong to the capsule and the principal that opened
// them: they outlive the call (a listener is accepted on across calls), and
// a call of another principal cannot use them (CodeNotFound, as for a handle
// that never existed). All of a capsule's handles close when it unloads.
// Every wait is bounded: by its own timeout, capped by MaxNetWait, and by
// the call's deadline and cancellation.
type Net interface {
	// NetConnect opens a TCP stream to host:port. The host is checked as
	// spelled against net_connect; then every address it resolves to must
	// pass the SSRF guard (one refused address refuses the connect), and
	// the connect must finish within NetConnectTimeout.
	NetConnect(host string, port int) (NetHandle, error)
	// NetBind opens a listener on addr: "unix:<absolute path>" for a unix
	// socket (created 0600; a stale socket file is replaced only when
	// nothing listens on it; any symlink on the path is refused), or
	// "host:port" for TCP, where host is localhost or a loopback literal.
	// Port 0 picks a free port; the answer names the address bound.
	NetBind(addr string) (NetListener, error)
	// NetAccept waits up to timeout for a connection on listener
	// (CodeTimeout when none came) and returns the new stream and its peer.
	NetAccept(listener NetHandle, timeout time.Duration) (NetConn, error)
	// NetRead waits up to timeout for bytes on stream and returns at most
	// max of them (max is capped at MaxNetRead). CodeTimeout when nothing
	// came (the stream stays usable); CodeClosed once the peer closed it
	// and everything was read.
	NetRead(stream NetHandle, max int, timeout time.Duration) ([]byte, error)
	// NetWrite writes all of data (at most MaxNetWrite bytes) to stream,
	// waiting at most MaxNetWait for a peer that does not read.
	NetWrite(stream NetHandle, data []byte) error
	// NetClose closes a stream or a listener (a unix listener removes its
	// socket file).
	NetClose(h NetHandle) error
}

// NetHandle names an open stream or listener of a capsule.
type NetHandle uint64

// NetListener is an open listener and the address it is bound to
// ("unix:/path" or "127.0.0.1:41234").
type NetListener struct {
	Handle NetHandle `json:"handle"`
	Addr   string    `json:"addr"`
}

// NetConn is an accepted stream and who is on the other end.
type NetConn struct {
	Handle NetHandle `json:"handle"`
	Peer   NetPeer   `json:"peer"`
}

// NetPeer is the other end of an accepted stream: for TCP its address; for
// a unix socket the uid and pid the kernel reports for it (SO_PEERCRED),
// -1 where the platform does not say.
type NetPeer struct {
	Addr string `json:"addr,omitempty"`
	UID  int    `json:"uid"`
	PID  int    `json:"pid"`
}

// Net limits.
const (
	// MaxNetHandles caps a capsule's open streams and listeners together.
	MaxNetHandles = 8
	// MaxNetRead caps one NetRead; a larger max is read as this.
	MaxNetRead = 1 << 20
	// MaxNetWrite caps one NetWrite.
	MaxNetWrite = 1 << 20
	// MaxNetWait caps one accept, read or write wait.
	MaxNetWait = 60 * time.Second
	// NetConnectTimeout bounds a connect, resolution included.
	NetConnectTimeout = 10 * time.Second
)
