package webview

import (
	"encoding/json"
	"strings"
)

// Change is what a write_file or replace_in_file call changes, for the
// page to show as a diff: the lines it removes and adds (a write's
// removed lines are not known here: the view reads no files).
type Change struct {
	Path    string   `json:"path"`
	Removed []string `json:"removed,omitempty"`
	Added   []string `json:"added,omitempty"`
	// LeftOut counts the lines past maxChangeLines.
	LeftOut int `json:"left_out,omitempty"`
}

// maxChangeLines bounds the lines a change keeps of each side.
const maxChangeLines = 20

// changeOf reads the change a call makes from its arguments; nil for
// another tool or arguments that do not say.
func changeOf(tool string, args json.RawMessage) *Change {
	var a struct {
		FilePath  *string `json:"file_path"`
		Content   *string `json:"content"`
		OldString *string `json:"old_string"`
		NewString *string `json:"new_string"`
	}
	if json.Unmarshal(args, &a) != nil || a.FilePath == nil {
		return nil
	}
	c := &Change{Path: clip(*a.FilePath)}
	switch {
	case tool == "replace_in_file" && a.OldString != nil && a.NewString != nil:
		c.Removed = c.keep(*a.OldString)
		c.Added = c.keep(*a.NewString)
	case tool == "write_file" && a.Content != nil:
		c.Added = c.keep(*a.Content)
	default:
		return nil
	}
	return c
}

// keep splits s into lines, each clipped, at most maxChangeLines (the rest
// counted in LeftOut).
func (c *Change) keep(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if len(lines) > maxChangeLines {
		c.LeftOut += len(lines) - maxChangeLines
		lines = lines[:maxChangeLines]
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = clip(l)
	}
	return out
}
