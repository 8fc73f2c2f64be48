package hooks

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/sdk"
)

// The hook events, spelled as Claude Code spells them (hook_event_name).
const (
	PreToolUse       = "PreToolUse"
	PostToolUse      = "PostToolUse"
	UserPromptSubmit = "UserPromptSubmit"
	Stop             = "Stop"
	SessionStart     = "SessionStart"
)

// Config is the hooks table as config.toml [hooks] gives it (JSON, in the
// [env] key ConfigKey; internal/config.Hooks writes it).
type Config struct {
	AllowWorkspace   bool   `json:"allow_workspace,omitempty"`
	TimeoutSecs      int    `json:"timeout_secs,omitempty"`
	PreToolUse       []Hook `json:"PreToolUse,omitempty"`
	PostToolUse      []Hook `json:"PostToolUse,omitempty"`
	UserPromptSubmit []Hook `json:"UserPromptSubmit,omitempty"`
	Stop             []Hook `json:"Stop,omitempty"`
	SessionStart     []Hook `json:"SessionStart,omitempty"`
}

// Hook is one command hook.
type Hook struct {
	Matcher     string `json:"matcher,omitempty"`
	Command     string `json:"command"`
	TimeoutSecs int    `json:"timeout_secs,omitempty"`
	// Origin says where the hook was configured, for messages:
	// config.toml or the workspace's file.
	Origin string `json:"-"`
}

// ConfigKey is the [env] key holding Config as JSON.
const ConfigKey = "hooks"

// WorkspaceFile is where a workspace's own hooks are, in Claude Code's
// settings layout ({"hooks": {"PreToolUse": [{"matcher", "hooks":
// [{"type": "command", "command", "timeout"}]}]}}), read only when the
// operator set allow_workspace.
const WorkspaceFile = ".astrid/hooks.json"

// Bounds.
const (
	DefaultTimeoutSecs = 60
	MaxTimeoutSecs     = 3600
	// maxWorkspaceFile caps the workspace's hooks file.
	maxWorkspaceFile = 256 << 10
)

// claudeNames are Claude Code's names of the built-in tools, so a matcher
// written for it ("Bash", "Write|Edit") selects the same tools here.
var claudeNames = map[string]string{
	"run_shell_command": "Bash",
	"write_file":        "Write",
	"replace_in_file":   "Edit",
	"read_file":         "Read",
	"list_directory":    "LS",
	"grep_search":       "Grep",
	"fetch_url":         "WebFetch",
}

// parseConfig reads the [env] value; empty is no hooks.
func parseConfig(v string) (Config, error) {
	var cfg Config
	if strings.TrimSpace(v) == "" {
		return cfg, nil
	}
	if err := json.Unmarshal([]byte(v), &cfg); err != nil {
		return Config{}, fmt.Errorf("the %s value is not the hooks table as JSON: %w", ConfigKey, err)
	}
	for _, hs := range []*[]Hook{&cfg.PreToolUse, &cfg.PostToolUse, &cfg.UserPromptSubmit, &cfg.Stop, &cfg.SessionStart} {
		for i := range *hs {
			(*hs)[i].Origin = "config.toml"
		}
	}
	return cfg, nil
}

// claudeSettings is the part of a Claude Code settings file that holds
// hooks.
type claudeSettings struct {
	Hooks map[string][]struct {
		Matcher string `json:"matcher"`
		Hooks   []struct {
			Type    string `json:"type"`
			Command string `json:"command"`
			Timeout int    `json:"timeout"`
		} `json:"hooks"`
	} `json:"hooks"`
}

// parseWorkspaceHooks reads a workspace's hooks file, in Claude Code's
// layout; every problem names the file.
func parseWorkspaceHooks(data []byte) (Config, error) {
	var s claudeSettings
	if err := json.Unmarshal(data, &s); err != nil {
		return Config{}, fmt.Errorf("%s: not JSON in Claude Code's settings layout: %w", WorkspaceFile, err)
	}
	var cfg Config
	for event, groups := range s.Hooks {
		list := cfg.event(event)
		if list == nil {
			return Config{}, fmt.Errorf("%s: unknown hook event %q (known: PreToolUse, PostToolUse, UserPromptSubmit, Stop, SessionStart)", WorkspaceFile, event)
		}
		for gi, g := range groups {
			for hi, h := range g.Hooks {
				if h.Type != "" && h.Type != "command" {
					return Config{}, fmt.Errorf("%s: hooks.%s[%d].hooks[%d]: type %q is not supported (only command)", WorkspaceFile, event, gi, hi, h.Type)
				}
				*list = append(*list, Hook{Matcher: g.Matcher, Command: h.Command, TimeoutSecs: h.Timeout, Origin: WorkspaceFile})
			}
		}
	}
	return cfg, cfg.check(WorkspaceFile)
}

// event is the list of hooks of event, nil for an unknown event.
func (cfg *Config) event(event string) *[]Hook {
	switch event {
	case PreToolUse:
		return &cfg.PreToolUse
	case PostToolUse:
		return &cfg.PostToolUse
	case UserPromptSubmit:
		return &cfg.UserPromptSubmit
	case Stop:
		return &cfg.Stop
	case SessionStart:
		return &cfg.SessionStart
	}
	return nil
}

// check refuses hooks that cannot run (config.toml's were checked with
// file:line when it loaded; a workspace file is checked here).
func (cfg *Config) check(where string) error {
	for _, event := range []string{PreToolUse, PostToolUse, UserPromptSubmit, Stop, SessionStart} {
		for i, h := range *cfg.event(event) {
			at := fmt.Sprintf("%s: %s hook %d", where, event, i+1)
			if strings.TrimSpace(h.Command) == "" {
				return fmt.Errorf("%s: command is empty", at)
			}
			if strings.IndexByte(h.Command, 0) >= 0 {
				return fmt.Errorf("%s: command holds a NUL byte", at)
			}
			if h.TimeoutSecs < 0 || h.TimeoutSecs > MaxTimeoutSecs {
				return fmt.Errorf("%s: timeout %d is not between 1 and %d seconds", at, h.TimeoutSecs, MaxTimeoutSecs)
			}
			if _, err := matcher(h.Matcher); err != nil {
				return fmt.Errorf("%s: %w", at, err)
			}
		}
	}
	return nil
}

// matcher compiles a tool matcher: a regular expression matched against
// the whole name; empty or "*" matches everything (nil).
func matcher(m string) (*regexp.Regexp, error) {
	if m == "" || m == "*" {
		return nil, nil
	}
	re, err := regexp.Compile("^(?:" + m + ")$")
	if err != nil {
		return nil, fmt.Errorf("matcher %q is not a regular expression: %w", m, err)
	}
	return re, nil
}

// matches reports whether hook h applies to tool (or its Claude Code name).
func (h Hook) matches(tool string) bool {
	re, err := matcher(h.Matcher)
	if err != nil {
		return false
	}
	if re == nil {
		return true
	}
	return re.MatchString(tool) || (claudeNames[tool] != "" && re.MatchString(claudeNames[tool]))
}

// hooksFor returns the hooks of event that apply (to tool, for the tool
// events): config.toml's, then the workspace's when the operator allows
// them. A workspace file that cannot be used is logged and skipped: it is
// the operator's hooks that guard, and theirs still run.
func hooksFor(c *sdk.Call, event, tool string) ([]Hook, Config) {
	v, _ := c.Config(ConfigKey)
	cfg, err := parseConfig(v)
	if err != nil {
		c.Log(hostapi.LogError, "hooks: "+err.Error()+"; no hook runs")
		return nil, cfg
	}
	all := append([]Hook(nil), *cfg.event(event)...)
	if cfg.AllowWorkspace {
		ws, err := workspaceHooks(c)
		if err != nil {
			c.Log(hostapi.LogWarn, "hooks: the workspace's hooks are not used: "+err.Error())
		} else {
			all = append(all, *ws.event(event)...)
		}
	}
	var out []Hook
	for _, h := range all {
		if event != PreToolUse && event != PostToolUse || h.matches(tool) {
			out = append(out, h)
		}
	}
	return out, cfg
}

// workspaceHooks reads the workspace's hooks file; none is no hooks.
func workspaceHooks(c *sdk.Call) (Config, error) {
	fi, err := c.FSStat(WorkspaceFile)
	if err != nil {
		if hostapi.CodeOf(err) == hostapi.CodeNotFound {
			return Config{}, nil
		}
		return Config{}, fmt.Errorf("%s: %w", WorkspaceFile, err)
	}
	if fi.IsDir || fi.Size > maxWorkspaceFile {
		return Config{}, fmt.Errorf("%s is a directory or over %d bytes", WorkspaceFile, maxWorkspaceFile)
	}
	data, err := c.FSRead(WorkspaceFile)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", WorkspaceFile, err)
	}
	return parseWorkspaceHooks(data)
}

// timeout is how long h may run.
func (h Hook) timeout(cfg Config) int {
	switch {
	case h.TimeoutSecs > 0:
		return h.TimeoutSecs
	case cfg.TimeoutSecs > 0:
		return cfg.TimeoutSecs
	}
	return DefaultTimeoutSecs
}
