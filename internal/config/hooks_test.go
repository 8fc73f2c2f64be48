package config

import (
	"strings"
	"testing"
)

// Hook tables that cannot run are refused at the line that says so.
func TestHooksValidation(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"[[hooks.pre_tool_use]]\ncommand = \"  \"\n", "config.toml:2:1: hooks.pre_tool_use[0].command: command is empty"},
		{"[[hooks.stop]]\ncommand = \"a\"\n[[hooks.stop]]\ncommand = \"b\"\ntimeout_secs = 4000\n", "config.toml:5:1: hooks.stop[1].timeout_secs: timeout_secs must be between 1 and 3600"},
		{"[[hooks.user_prompt_submit]]\ncommand = \"a\"\nmatcher = \"Bash\"\n", "config.toml:1:3: hooks.user_prompt_submit[0]: matcher is for pre_tool_use and post_tool_use only"},
		{"[[hooks.post_tool_use]]\ncommand = \"a\"\nmatcher = \"[\"\n", "config.toml:3:1: hooks.post_tool_use[0].matcher: matcher \"[\" is not a regular expression"},
		{"[hooks]\ntimeout_secs = -1\n", "config.toml:2:1: hooks.timeout_secs: must be between 1 and 3600"},
		{"[[hooks.pre_tool_use]]\ncommand = \"a\"\nbogus = 1\n", "bogus"},
	} {
		_, err := parse("config.toml", []byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.doc, err, c.want)
		}
	}
	cfg, err := parse("config.toml", []byte("[hooks]\nallow_workspace = true\n[[hooks.pre_tool_use]]\nmatcher = \"Bash\"\ncommand = \"x\"\n"))
	if err != nil || !cfg.Hooks.Configured() || cfg.Hooks.JSON() != `{"allow_workspace":true,"PreToolUse":[{"matcher":"Bash","command":"x"}]}` {
		t.Fatalf("%v, %s", err, cfg.Hooks.JSON())
	}
	if (Hooks{}).Configured() {
		t.Fatal("no hooks is configured")
	}
}
