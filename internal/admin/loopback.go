package admin

import (
	"fmt"
	"net"
	"strings"
)

// CheckListen reports why addr ("host:port") is not a loopback address the
// admin server may listen on, or nil. The host must be a loopback IP
// literal (127.0.0.0/8, ::1) or "localhost"; the port a number (0: any
// free port). A name other than localhost is refused even if it resolves
// to loopback today: a resolver can change its mind.
func CheckListen(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("admin: listen address %q is not host:port: %w", addr, err)
	}
	if _, err := net.LookupPort("tcp", port); err != nil || strings.TrimLeft(port, "0123456789") != "" {
		return fmt.Errorf("admin: listen address %q: port %q is not a number", addr, port)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("admin: listen address %q is not loopback: the admin server listens on 127.0.0.1, ::1 or localhost only", addr)
	}
	return nil
}

// bindAddr is addr with "localhost" replaced by 127.0.0.1, so the server
// binds the address it later checks Host headers against.
func bindAddr(addr string) string {
	host, port, _ := net.SplitHostPort(addr)
	if strings.EqualFold(host, "localhost") {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}
