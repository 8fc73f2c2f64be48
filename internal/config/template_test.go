package config

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// The template names every key Config accepts, each with a note, and
// uncommented it decodes to exactly Default(): it cannot drift from the
// struct.
func TestTemplateHasEveryKeyAtItsDefault(t *testing.T) {
	text := string(Template())
	for key, want := range schema() {
		if keyNotes[key] == "" {
			t.Errorf("key %s has no note for the template", key)
		}
		name := key[strings.LastIndexByte(key, '.')+1:]
		line := "# " + name + " = "
		if want == "a table" {
			line = "# [" + key + "]"
		}
		if !strings.Contains(text, line) {
			t.Errorf("the template lacks %q", line)
		}
	}
	for key := range keyNotes {
		if _, ok := schema()[key]; !ok {
			t.Errorf("a note for %s, which is not a key", key)
		}
	}
	commented := regexp.MustCompile(`(?m)^# (\[[a-z_]+\]|[a-z_]+ = .*)$`)
	uncommented := commented.ReplaceAllString(text, "$1")
	cfg, err := parse("config.toml", []byte(uncommented))
	if err != nil {
		t.Fatalf("the uncommented template does not load: %v\n%s", err, uncommented)
	}
	if len(cfg.Egress.Allow) == 0 {
		cfg.Egress.Allow = nil // allow = [] is the default's nil
	}
	if len(cfg.NATS.Routes) == 0 {
		cfg.NATS.Routes = nil // likewise routes = []
	}
	if len(cfg.Uplink.Principals) == 0 {
		cfg.Uplink.Principals = nil // likewise principals = []
	}
	if len(cfg.Uplink.Ingress) == 0 {
		cfg.Uplink.Ingress = nil // and ingress = []
	}
	if len(cfg.Uplink.ActsFor) == 0 {
		cfg.Uplink.ActsFor = nil // and acts_for = []
	}
	if len(cfg.MCP.Sampling) == 0 {
		cfg.MCP.Sampling = nil // and sampling = []
	}
	if len(cfg.MCP.SessionCommands) == 0 {
		cfg.MCP.SessionCommands = nil // and session_commands = []
	}
	if len(cfg.MCP.SessionRead) == 0 {
		cfg.MCP.SessionRead = nil // and session_read = []
	}
	for _, hs := range []*[]Hook{&cfg.Hooks.PreToolUse, &cfg.Hooks.PostToolUse, &cfg.Hooks.UserPromptSubmit, &cfg.Hooks.Stop, &cfg.Hooks.SessionStart} {
		if len(*hs) == 0 {
			*hs = nil // and each hooks event = []
		}
	}
	if !reflect.DeepEqual(cfg, Default()) {
		t.Errorf("the uncommented template decodes to %+v, want Default() %+v", cfg, Default())
	}
	if got := len(commented.FindAllString(text, -1)); got != len(schema()) {
		t.Errorf("%d commented keys and tables, want %d", got, len(schema()))
	}
	// As written (all commented), it is a valid, empty config.
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, Template(), 0o600); err != nil {
		t.Fatal(err)
	}
	if cfg, err := Load(path); err != nil || !reflect.DeepEqual(cfg, Default()) {
		t.Errorf("Load(template) = %+v, %v", cfg, err)
	}
}
