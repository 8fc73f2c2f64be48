package config

import "time"

// GC is what `astrid gc` removes (cmd/astrid/gc.go).
type GC struct {
	// SessionMaxAge is how long a session may go unwritten before gc
	// deletes it; 0 keeps every session.
	SessionMaxAge Duration `toml:"session_max_age"`
}

// DefaultSessionMaxAge is GC.SessionMaxAge when config.toml sets none:
// 90 days.
const DefaultSessionMaxAge = 90 * 24 * time.Hour
