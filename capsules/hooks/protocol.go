package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Input is what a hook reads on stdin: Claude Code's common fields and the
// event's own (docs/hooks.md). transcript_path is empty: the session store
// keeps the history, and no file of it is in the hook's reach.
type Input struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	// Cwd is the hook's working directory: the workspace.
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	PermissionMode string `json:"permission_mode"`
	// PreToolUse, PostToolUse.
	ToolName     string          `json:"tool_name,omitempty"`
	ToolInput    json.RawMessage `json:"tool_input,omitempty"`
	ToolResponse json.RawMessage `json:"tool_response,omitempty"`
	// UserPromptSubmit.
	Prompt string `json:"prompt,omitempty"`
	// SessionStart: "startup" (this process had not seen the session).
	Source string `json:"source,omitempty"`
	// Stop: always false (a Stop hook cannot continue a turn here).
	StopHookActive *bool `json:"stop_hook_active,omitempty"`
}

// output is the JSON a hook may print on stdout (Claude Code's fields).
type output struct {
	Continue   *bool  `json:"continue"`
	StopReason string `json:"stopReason"`
	Decision   string `json:"decision"`
	Reason     string `json:"reason"`
	// SystemMessage is a note for the person; it is logged.
	SystemMessage string `json:"systemMessage"`
	Specific      struct {
		HookEventName            string          `json:"hookEventName"`
		PermissionDecision       string          `json:"permissionDecision"`
		PermissionDecisionReason string          `json:"permissionDecisionReason"`
		UpdatedInput             json.RawMessage `json:"updatedInput"`
		AdditionalContext        string          `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// Verdict is what one hook run decided.
type Verdict struct {
	// Block: refuse the tool call or the prompt; Reason says why (for the
	// model, for a tool call; for the person, for a prompt).
	Block  bool
	Reason string
	// Allow: a PreToolUse hook said allow. The approval layer still asks
	// the person about a tool that changes things (docs/hooks.md).
	Allow bool
	// UpdatedInput replaces a tool call's arguments (PreToolUse).
	UpdatedInput json.RawMessage
	// Context is text for the model (additionalContext; a
	// UserPromptSubmit or SessionStart hook's plain stdout).
	Context string
	// Problem says what was wrong with the run or its output, when
	// something was (it then decided nothing, unless Block is set).
	Problem string
	// Note is a systemMessage, for the log.
	Note string
}

// maxReason caps a reason or context taken from a hook (what reaches the
// model or the person).
const maxReason = 16 << 10

// Decide reads how a hook ended, as Claude Code does: exit 2 blocks with
// stderr as the reason; exit 0 with a JSON object on stdout decides by its
// fields (plain text is context for UserPromptSubmit and SessionStart, and
// ignored otherwise); any other exit is a problem that decides nothing.
func Decide(event string, exitCode int, stdout, stderr []byte) Verdict {
	switch exitCode {
	case 0:
	case 2:
		reason := clean(stderr)
		if reason == "" {
			reason = "the hook exited 2 without saying why on stderr"
		}
		return Verdict{Block: true, Reason: reason}
	default:
		return Verdict{Problem: fmt.Sprintf("exited %d: %s", exitCode, orNothing(clean(stderr)))}
	}
	trimmed := bytes.TrimSpace(stdout)
	if len(trimmed) == 0 {
		return Verdict{}
	}
	if trimmed[0] != '{' {
		if event == UserPromptSubmit || event == SessionStart {
			return Verdict{Context: clean(trimmed)}
		}
		return Verdict{Problem: fmt.Sprintf("printed something that is not a JSON object (ignored): %s", shorten(clean(trimmed), 200))}
	}
	var out output
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if err := dec.Decode(&out); err != nil {
		return Verdict{Problem: fmt.Sprintf("printed JSON that does not decode as a hook answer (ignored): %v", err)}
	}
	if dec.More() {
		return Verdict{Problem: "printed more than one JSON value (ignored)"}
	}
	v := Verdict{Note: clean([]byte(out.SystemMessage)), Context: clean([]byte(out.Specific.AdditionalContext))}
	if out.Continue != nil && !*out.Continue {
		v.Block, v.Reason = true, orDefault(clean([]byte(out.StopReason)), "the hook answered continue: false")
		return v
	}
	switch event {
	case PreToolUse:
		switch out.Specific.PermissionDecision {
		case "deny":
			v.Block, v.Reason = true, orDefault(clean([]byte(out.Specific.PermissionDecisionReason)), "the hook denied it")
			return v
		case "allow":
			v.Allow = true
		case "", "ask":
		default:
			v.Problem = fmt.Sprintf("permissionDecision %q is none of allow, deny, ask (ignored)", shorten(out.Specific.PermissionDecision, 40))
		}
		switch out.Decision { // the older fields
		case "block":
			v.Block, v.Reason = true, orDefault(clean([]byte(out.Reason)), "the hook blocked it")
			return v
		case "approve":
			v.Allow = true
		}
		if u := bytes.TrimSpace(out.Specific.UpdatedInput); len(u) > 0 && string(u) != "null" {
			if u[0] != '{' {
				v.Problem = "updatedInput is not a JSON object (ignored)"
			} else {
				v.UpdatedInput = append(json.RawMessage(nil), u...)
			}
		}
	case UserPromptSubmit, PostToolUse, Stop:
		if out.Decision == "block" {
			v.Block, v.Reason = true, orDefault(clean([]byte(out.Reason)), "the hook blocked it")
		}
	}
	return v
}

// clean is hook output as text: valid UTF-8, trimmed, capped.
func clean(b []byte) string {
	s := strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
	return shorten(s, maxReason)
}

// shorten cuts s to n bytes on a rune boundary, saying so.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf(" … (%d bytes cut)", len(s)-cut)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func orNothing(s string) string { return orDefault(s, "(nothing on stderr)") }
