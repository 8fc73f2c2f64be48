package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// config show names each value's source: config.toml's line, a flag, the
// environment, or the default; a broken config.toml is reported at its line.
func TestConfigShowNamesSources(t *testing.T) {
	home := t.TempDir()
	cfgPath := filepath.Join(home, "config.toml")
	if err := os.WriteFile(cfgPath, []byte("[log]\nlevel = \"debug\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := astridProcess(home, "config", "show", "--json", "--nats-host-id", "h7")
	cmd.Env = append(cmd.Env, "OPENAI_API_KEY=sk-do-not-print", "OPENAI_BASE_URL=http://localhost:11434/v1")
	out, err := cmd.Output()
	if code := exitStatus(t, err); code != 0 {
		t.Fatalf("config show: exit %d: %s", code, out)
	}
	var show configShow
	if err := json.Unmarshal(out, &show); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if show.Home != home || show.HomeSource != "env ASTRID_HOME" {
		t.Errorf("home %q from %q", show.Home, show.HomeSource)
	}
	src := map[string]string{}
	for _, s := range show.Settings {
		src[s.Key] = s.Value + " " + s.Source
	}
	for key, want := range map[string]string{
		"log.level":     `"debug" ` + cfgPath + ":2",
		"nats.host_id":  `"h7" flag`,
		"call_deadline": `"5m" default`,
	} {
		if src[key] != want {
			t.Errorf("%s: %q, want %q", key, src[key], want)
		}
	}
	if strings.Contains(string(out), "sk-do-not-print") {
		t.Error("config show printed a secret from the environment")
	}
	env := map[string]string{}
	for _, s := range show.CapsuleEnv {
		env[s.Key] = s.Value + " " + s.Source
	}
	if env["astrid-capsule-openai.api_key"] != `"(set)" env OPENAI_API_KEY` || env["astrid-capsule-openai.base_url"] != `"http://localhost:11434/v1" env OPENAI_BASE_URL` {
		t.Errorf("capsule env from the environment: %v", env)
	}

	// The text form: one aligned line a key.
	text, code := runProcess(t, home, "config", "show")
	if code != 0 || !strings.Contains(text, "log.level = \"debug\"") || !strings.Contains(text, "# "+cfgPath+":2") {
		t.Errorf("config show: exit %d:\n%s", code, text)
	}

	if err := os.WriteFile(cfgPath, []byte("[log]\nlevl = \"debug\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	text, code = runProcess(t, home, "config", "show")
	if code != 1 || !strings.Contains(text, cfgPath+":2") || !strings.Contains(text, "did you mean log.level") {
		t.Errorf("a bad config.toml: exit %d:\n%s", code, text)
	}
}
