package daemon

import (
	"path/filepath"

	"github.com/astrid-go/astrid/internal/config"
)

// Paths are the files a daemon keeps in its home.
type Paths struct {
	// Run is $ASTRID_HOME/run (0700): the lock, pid, status and socket.
	Run string
	// Lock is held (flock) for the daemon's whole life: the one source of
	// truth for "a daemon runs". The file itself is never removed, so two
	// starts cannot each lock a different inode.
	Lock string
	// Pid holds the daemon's pid once it is ready to serve.
	Pid string
	// Socket is where the CLI uplink listens (SocketPath).
	Socket string
	// Status is the JSON snapshot the daemon rewrites (Status).
	Status string
	// Admin holds the admin server's URL and token (0600) while it serves
	// (admin.RunInfo; `astrid ui` reads it).
	Admin string
	// Log is the structured log (JSON lines), rotated by size.
	Log string
	// Output takes a detached daemon's own stdout and stderr (a panic's
	// trace): not rotated, since the process holds it open; truncated at
	// each start.
	Output string
}

// PathsOf returns the daemon's paths in home.
func PathsOf(home string) Paths {
	l := config.Layout(home)
	return Paths{
		Run:    l.Run,
		Lock:   filepath.Join(l.Run, "astrid.lock"),
		Pid:    filepath.Join(l.Run, "astrid.pid"),
		Socket: SocketPath(home),
		Status: filepath.Join(l.Run, "status.json"),
		Admin:  filepath.Join(l.Run, "admin.json"),
		Log:    filepath.Join(l.Logs, "daemon.log"),
		Output: filepath.Join(l.Logs, "daemon.out"),
	}
}

// SocketPath is the unix socket the CLI uplink serves for the daemon of
// home: $ASTRID_HOME/run/astrid.sock.
func SocketPath(home string) string {
	return filepath.Join(config.Layout(home).Run, "astrid.sock")
}
