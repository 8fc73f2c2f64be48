package config

import (
	"fmt"
	"time"
)

// Duration is a time.Duration written in TOML as a Go duration string
// ("90s", "5m", "1h30m"). A bare integer is refused: TOML has no unit, and
// nanoseconds are never what an operator means.
type Duration struct {
	time.Duration
}

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration such as \"30s\" or \"5m\"", b)
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration in Go syntax.
func (d Duration) MarshalText() ([]byte, error) {
	return []byte(d.String()), nil
}
