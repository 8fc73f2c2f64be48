package config

import (
	"os"
	"path/filepath"
	"testing"
)

// Each key's source: the line of config.toml that sets it, the caller's
// override where the value changed after Load, else the default.
func TestSettingsNameEachSource(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	data := "call_deadline = \"1m\"\n\n[limits]\nqueue_depth = 64\n[nats]\nurl = \"nats://a:4222\"\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.NATS.URL = "nats://b:4222" // a flag
	cfg.NATS.HostID = "h1"         // a flag
	got, err := Settings(path, cfg, "flag")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{
		"call_deadline":      {`"1m"`, path + ":1"},
		"limits.queue_depth": {"64", path + ":4"}, // written, though equal to the default
		"nats.url":           {`"nats://b:4222"`, "flag"},
		"nats.host_id":       {`"h1"`, "flag"},
		"store_lock_wait":    {`"5s"`, "default"},
		"egress.allow":       {"[]", "default"},
	}
	seen := map[string]bool{}
	for _, s := range got {
		if seen[s.Key] {
			t.Errorf("key %s listed twice", s.Key)
		}
		seen[s.Key] = true
		if w, ok := want[s.Key]; ok && (s.Value != w[0] || s.Source != w[1]) {
			t.Errorf("%s = %s (%s), want %s (%s)", s.Key, s.Value, s.Source, w[0], w[1])
		}
	}
	keys := schema()
	for k := range keys {
		if keys[k] != "a table" && !seen[k] {
			t.Errorf("key %s of Config not listed", k)
		}
	}
}

func TestSettingsReportAProblemAtItsLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte("[limits]\nqueue_dept = 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Settings(path, Default(), "flag"); err == nil {
		t.Fatal("a config.toml with an unknown key was shown")
	}
}
