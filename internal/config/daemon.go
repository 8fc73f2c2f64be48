package config

// Daemon configures `astrid daemon` itself (DESIGN §8).
type Daemon struct {
	// IdleExit is how long a daemon a command started by itself (astrid
	// chat, when none ran) keeps running with no client connected and no
	// turn running before it exits; 0: it never does. A daemon started
	// with astrid start or astrid daemon never exits for being idle.
	IdleExit Duration `toml:"idle_exit"`
}

// validate reports the daemon's problems through bad.
func (d Daemon) validate(bad func(key, format string, args ...any)) {
	if d.IdleExit.Duration < 0 {
		bad("daemon.idle_exit", `must be "0s" (never) or a positive duration, got %s`, d.IdleExit)
	}
}
