package config

import "github.com/astrid-go/astrid/internal/admin"

// Admin configures the daemon's admin HTTP server (DESIGN §10): the web
// view `astrid ui` opens, and the handlers mounted beside it (metrics).
type Admin struct {
	// Enabled starts the server with the daemon. On by default: it listens
	// on loopback only and answers nobody without the run's token, which
	// only the home's owner can read.
	Enabled bool `toml:"enabled"`
	// Listen is the loopback "host:port" (127.0.0.1, ::1 or localhost);
	// port 0 takes a free one each run, so daemons of several homes never
	// collide.
	Listen string `toml:"listen"`
}

// validate reports the admin server's problems through bad.
func (a Admin) validate(bad func(key, format string, args ...any)) {
	if err := admin.CheckListen(a.Listen); err != nil {
		bad("admin.listen", "%v", err)
	}
}
