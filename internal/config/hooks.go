package config

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Hooks are the operator's command hooks (issue 34.3): programs run at
// points of an agent turn, speaking Claude Code's hook protocol (JSON on
// stdin and stdout). The hooks capsule (capsules/hooks) runs them; the
// kernel only hands it this table (HooksCapsuleConfig).
type Hooks struct {
	// AllowWorkspace lets a workspace add hooks of its own in
	// .astrid/hooks.json; off by default, since a repository one clones
	// would otherwise run its programs on every turn.
	AllowWorkspace bool `toml:"allow_workspace" json:"allow_workspace,omitempty"`
	// TimeoutSecs bounds every hook without a timeout_secs of its own
	// (0: 60 s).
	TimeoutSecs      int    `toml:"timeout_secs" json:"timeout_secs,omitempty"`
	PreToolUse       []Hook `toml:"pre_tool_use" json:"PreToolUse,omitempty"`
	PostToolUse      []Hook `toml:"post_tool_use" json:"PostToolUse,omitempty"`
	UserPromptSubmit []Hook `toml:"user_prompt_submit" json:"UserPromptSubmit,omitempty"`
	Stop             []Hook `toml:"stop" json:"Stop,omitempty"`
	SessionStart     []Hook `toml:"session_start" json:"SessionStart,omitempty"`
}

// Hook is one command hook.
type Hook struct {
	// Matcher, for the tool events, is a regular expression a tool's name
	// (or its Claude Code name: Bash, Write, Edit, Read) must match in
	// full; empty or "*" matches every tool.
	Matcher string `toml:"matcher" json:"matcher,omitempty"`
	// Command is run with bash -c, confined like any process a capsule
	// starts.
	Command string `toml:"command" json:"command"`
	// TimeoutSecs bounds this hook (0: Hooks.TimeoutSecs).
	TimeoutSecs int `toml:"timeout_secs" json:"timeout_secs,omitempty"`
}

// MaxHookTimeoutSecs is the longest a hook may be given.
const MaxHookTimeoutSecs = 3600

// HooksCapsuleID is the capsule that runs the hooks, and HooksConfigKey
// the [env] key through which it receives Hooks as JSON.
const (
	HooksCapsuleID = "astrid-capsule-hooks"
	HooksConfigKey = "hooks"
)

// Configured reports whether any hook or the workspace's may run.
func (h Hooks) Configured() bool {
	return h.AllowWorkspace || len(h.PreToolUse)+len(h.PostToolUse)+len(h.UserPromptSubmit)+len(h.Stop)+len(h.SessionStart) > 0
}

// JSON is the table as the hooks capsule reads it.
func (h Hooks) JSON() string {
	b, err := json.Marshal(h)
	if err != nil { // plain strings, ints and bools: cannot fail
		panic(fmt.Sprintf("config: hooks: %v", err))
	}
	return string(b)
}

func (h Hooks) validate(bad func(key, format string, args ...any)) {
	if h.TimeoutSecs < 0 || h.TimeoutSecs > MaxHookTimeoutSecs {
		bad("hooks.timeout_secs", "must be between 1 and %d seconds (0: 60), got %d", MaxHookTimeoutSecs, h.TimeoutSecs)
	}
	for _, ev := range []struct {
		name  string
		hooks []Hook
		tools bool
	}{
		{"pre_tool_use", h.PreToolUse, true}, {"post_tool_use", h.PostToolUse, true},
		{"user_prompt_submit", h.UserPromptSubmit, false}, {"stop", h.Stop, false}, {"session_start", h.SessionStart, false},
	} {
		for i, hk := range ev.hooks {
			key := fmt.Sprintf("hooks.%s[%d]", ev.name, i)
			if strings.TrimSpace(hk.Command) == "" {
				bad(key+".command", "command is empty: name the program to run (bash -c <command>)")
			}
			if strings.IndexByte(hk.Command, 0) >= 0 {
				bad(key+".command", "command holds a NUL byte")
			}
			if hk.TimeoutSecs < 0 || hk.TimeoutSecs > MaxHookTimeoutSecs {
				bad(key+".timeout_secs", "timeout_secs must be between 1 and %d (0: hooks.timeout_secs), got %d", MaxHookTimeoutSecs, hk.TimeoutSecs)
			}
			if hk.Matcher != "" && !ev.tools {
				bad(key, "matcher is for pre_tool_use and post_tool_use only; these hooks run every time")
			}
			if hk.Matcher != "" && hk.Matcher != "*" {
				if _, err := regexp.Compile("^(?:" + hk.Matcher + ")$"); err != nil {
					bad(key+".matcher", "matcher %q is not a regular expression: %v", hk.Matcher, err)
				}
			}
		}
	}
}
