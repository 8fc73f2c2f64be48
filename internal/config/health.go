package config

// Health is how the runtime's health monitor restarts a failed capsule
// (internal/runtime/health.go).
type Health struct {
	// MaxRestarts is how many restarts a failed capsule gets before the
	// monitor gives up on it (until it is reloaded or reinstalled); 0:
	// never restart.
	MaxRestarts int `toml:"max_restarts"`
	// RestartBackoff is the wait before the first restart; each further
	// one waits twice as long, up to MaxRestartBackoff.
	RestartBackoff Duration `toml:"restart_backoff"`
	// MaxRestartBackoff caps the wait between restarts.
	MaxRestartBackoff Duration `toml:"max_restart_backoff"`
}
