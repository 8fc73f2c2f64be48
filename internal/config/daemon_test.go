package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// [daemon] idle_exit: off by default, a duration when set, never negative.
func TestDaemonIdleExit(t *testing.T) {
	if d := Default().Daemon.IdleExit.Duration; d != 0 {
		t.Fatalf("idle_exit defaults to %s, want 0 (never)", d)
	}
	path := filepath.Join(t.TempDir(), "config.toml")
	load := func(body string) (Config, error) {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return Load(path)
	}
	c, err := load("[daemon]\nidle_exit = \"30m\"\n")
	if err != nil || c.Daemon.IdleExit.Duration != 30*time.Minute {
		t.Fatalf("idle_exit = %s, %v", c.Daemon.IdleExit, err)
	}
	for _, body := range []string{"[daemon]\nidle_exit = \"-1s\"\n", "[daemon]\nidle_exit = 30\n", "[daemon]\nidle = \"1m\"\n"} {
		if _, err := load(body); err == nil || !strings.Contains(err.Error(), "daemon.idle") {
			t.Errorf("%q: %v", body, err)
		}
	}
}
