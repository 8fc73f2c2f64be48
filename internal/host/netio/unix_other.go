//go:build !linux

package netio

import (
	"net"

	"github.com/astrid-go/astrid/hostapi"
)

// bindUnix needs Linux's no-symlink directory walk and socket mode; other
// systems are refused rather than served less safely.
func bindUnix(string) (net.Listener, func(), error) {
	return nil, nil, hostapi.Errorf(hostapi.CodeNotSupported, "net_bind", "unix sockets are bound on Linux only")
}

func peerCred(*net.UnixConn) (uid, pid int) { return -1, -1 }
