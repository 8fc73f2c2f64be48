//go:build linux

package netio

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/astrid-go/astrid/hostapi"
)

// maxSocketPath is what fits in sockaddr_un's sun_path with its NUL: a
// longer path could be bound (through /proc/self/fd) but never connected to.
const maxSocketPath = 107

// bindUnix listens on the unix socket p, an absolute path the gate passed.
//
// The directory is opened one component at a time without following any
// symlink, and the socket is bound, probed and removed through that open
// directory (/proc/self/fd/N/name, unlinkat), so no swap of a path
// component for a symlink can move the socket elsewhere. The socket file is
// 0600 from the moment it exists: the mode is set on the socket before
// bind, which gives its file that mode (less the umask). An existing file
// is replaced only when it is a socket nothing listens on (a stale one);
// anything else, a live socket included, is refused.
func bindUnix(p string) (net.Listener, func(), error) {
	const op = "net_bind"
	if len(p) > maxSocketPath {
		return nil, nil, hostapi.Errorf(hostapi.CodeInvalid, op, "unix socket path is %d bytes; at most %d can be connected to", len(p), maxSocketPath)
	}
	dir, name := path.Split(p)
	if name == "" || name == "." || name == ".." || path.Clean(p) != p {
		return nil, nil, hostapi.Errorf(hostapi.CodeInvalid, op, "%q is not a clean path to a socket file", p)
	}
	dirfd, err := openDirNoSymlinks(dir)
	if err != nil {
		return nil, nil, err
	}
	ok := false
	defer func() {
		if !ok {
			_ = syscall.Close(dirfd)
		}
	}()
	via := "/proc/self/fd/" + strconv.Itoa(dirfd) + "/" + name
	if err := clearStaleSocket(dirfd, name, via, p); err != nil {
		return nil, nil, err
	}
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, hostapi.Errorf(hostapi.CodeIO, op, "socket: %v", err)
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close() // FileListener holds its own descriptor
	if err := syscall.Fchmod(fd, 0o600); err != nil {
		return nil, nil, hostapi.Errorf(hostapi.CodeIO, op, "chmod socket: %v", err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: via}); err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, nil, hostapi.Errorf(hostapi.CodeExists, op, "%s appeared while binding", p)
		}
		return nil, nil, hostapi.Errorf(hostapi.CodeIO, op, "bind %s: %v", p, err)
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFSOCK || st.Mode&0o077 != 0 {
		_ = unix.Unlinkat(dirfd, name, 0)
		return nil, nil, hostapi.Errorf(hostapi.CodeInternal, op, "%s is not a 0600 socket after bind (mode %o, %v)", p, st.Mode, err)
	}
	if err := syscall.Listen(fd, 128); err != nil {
		_ = unix.Unlinkat(dirfd, name, 0)
		return nil, nil, hostapi.Errorf(hostapi.CodeIO, op, "listen %s: %v", p, err)
	}
	ln, err := net.FileListener(f)
	if err != nil {
		_ = unix.Unlinkat(dirfd, name, 0)
		return nil, nil, hostapi.Errorf(hostapi.CodeIO, op, "listen %s: %v", p, err)
	}
	dev, ino := st.Dev, st.Ino
	cleanup := func() {
		// Remove the file only if it is still the one bound here.
		var now unix.Stat_t
		if unix.Fstatat(dirfd, name, &now, unix.AT_SYMLINK_NOFOLLOW) == nil && now.Dev == dev && now.Ino == ino {
			_ = unix.Unlinkat(dirfd, name, 0)
		}
		_ = syscall.Close(dirfd)
	}
	ok = true
	return ln, cleanup, nil
}

// openDirNoSymlinks opens the absolute directory dir (ending in '/') as an
// O_PATH descriptor, refusing if any component is a symlink or missing.
func openDirNoSymlinks(dir string) (int, error) {
	const op = "net_bind"
	fd, err := syscall.Open("/", unix.O_PATH|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return -1, hostapi.Errorf(hostapi.CodeIO, op, "open /: %v", err)
	}
	for _, c := range strings.Split(strings.Trim(dir, "/"), "/") {
		if c == "" {
			continue
		}
		next, err := syscall.Openat(fd, c, unix.O_PATH|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		_ = syscall.Close(fd)
		switch {
		case errors.Is(err, syscall.ENOENT):
			return -1, hostapi.Errorf(hostapi.CodeNotFound, op, "directory %s does not exist (at %q)", dir, c)
		case errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.ELOOP):
			return -1, hostapi.Errorf(hostapi.CodeDenied, op, "%q in %s is a symlink or not a directory; a socket path must be real", c, dir)
		case err != nil:
			return -1, hostapi.Errorf(hostapi.CodeIO, op, "open %s: %v", dir, err)
		}
		fd = next
	}
	return fd, nil
}

// clearStaleSocket leaves the way free to bind name in dirfd: nothing
// there, or a socket nothing listens on (removed).
func clearStaleSocket(dirfd int, name, via, shown string) error {
	const op = "net_bind"
	var st unix.Stat_t
	err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, syscall.ENOENT) {
		return nil
	}
	if err != nil {
		return hostapi.Errorf(hostapi.CodeIO, op, "stat %s: %v", shown, err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFSOCK {
		return hostapi.Errorf(hostapi.CodeExists, op, "%s exists and is %s, not a stale socket; it is left alone", shown, fileKind(st.Mode))
	}
	probe, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return hostapi.Errorf(hostapi.CodeIO, op, "socket: %v", err)
	}
	err = syscall.Connect(probe, &syscall.SockaddrUnix{Name: via})
	_ = syscall.Close(probe)
	switch {
	case err == nil, errors.Is(err, syscall.EAGAIN):
		// EAGAIN: a listener whose backlog is full is still a listener.
		return hostapi.Errorf(hostapi.CodeExists, op, "something listens on %s", shown)
	case errors.Is(err, syscall.ECONNREFUSED):
		if err := unix.Unlinkat(dirfd, name, 0); err != nil && !errors.Is(err, syscall.ENOENT) {
			return hostapi.Errorf(hostapi.CodeIO, op, "remove stale socket %s: %v", shown, err)
		}
		return nil
	}
	return hostapi.Errorf(hostapi.CodeIO, op, "probe %s: %v", shown, err)
}

func fileKind(mode uint32) string {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFLNK:
		return "a symlink"
	case syscall.S_IFDIR:
		return "a directory"
	case syscall.S_IFREG:
		return "a regular file"
	}
	return fmt.Sprintf("a file of type %o", mode&syscall.S_IFMT)
}

// peerCred is the uid and pid of a unix stream's peer, -1 when unknown.
func peerCred(c *net.UnixConn) (uid, pid int) {
	uid, pid = -1, -1
	raw, err := c.SyscallConn()
	if err != nil {
		return
	}
	_ = raw.Control(func(fd uintptr) {
		if cred, err := syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED); err == nil {
			uid, pid = int(cred.Uid), int(cred.Pid)
		}
	})
	return uid, pid
}
