package hooks

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDecide: whatever a hook prints and however it exits, reading it
// never panics, a block always has a reason, text taken from it is valid
// UTF-8 and bounded, and updatedInput is a JSON object when set.
func FuzzDecide(f *testing.F) {
	for _, s := range []string{``, `{}`, `not json`, `{"continue":false}`, `{"decision":"block","reason":"r"}`,
		`{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"x"}}`,
		`{"hookSpecificOutput":{"updatedInput":{"a":1}}}`, `{"hookSpecificOutput":{"updatedInput":[1]}}`, `{} {}`, "\xff{"} {
		f.Add(PreToolUse, 0, []byte(s), []byte("err"))
		f.Add(UserPromptSubmit, 2, []byte(s), []byte(""))
	}
	f.Fuzz(func(t *testing.T, event string, exit int, stdout, stderr []byte) {
		v := Decide(event, exit, stdout, stderr)
		if v.Block && v.Reason == "" {
			t.Fatalf("a block without a reason: %+v", v)
		}
		for _, s := range []string{v.Reason, v.Context, v.Note} {
			if !utf8.ValidString(s) || len(s) > maxReason+64 {
				t.Fatalf("text not valid or not bounded (%d bytes)", len(s))
			}
		}
		if v.UpdatedInput != nil && !strings.HasPrefix(string(v.UpdatedInput), "{") {
			t.Fatalf("updatedInput %q is not an object", v.UpdatedInput)
		}
	})
}

// FuzzWorkspaceHooks: a workspace's hooks file, which anyone who can
// write the repository controls, never panics the reader, and what it
// accepts passes the checks config.toml's hooks pass.
func FuzzWorkspaceHooks(f *testing.F) {
	f.Add([]byte(`{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"x","timeout":5}]}]}}`))
	f.Add([]byte(`{"hooks":{"Nope":[]}}`))
	f.Add([]byte(`{"hooks":{"PreToolUse":[{"matcher":"(","hooks":[{"command":"x"}]}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := parseWorkspaceHooks(data)
		if err != nil {
			return
		}
		if err := cfg.check("again"); err != nil {
			t.Fatalf("accepted, then refused: %v", err)
		}
	})
}
