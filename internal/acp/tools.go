package acp

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
)

// kindOf is the ACP kind of tool name: the built-in tools by name, any
// other (an MCP server's <server>:<tool>, a wasm capsule's) by the words
// its name is made of, else other.
func kindOf(name string) acpsdk.ToolKind {
	switch name {
	case "read_file", "list_directory", "read_process_logs":
		return acpsdk.ToolKindRead
	case "write_file", "replace_in_file", "create_directory":
		return acpsdk.ToolKindEdit
	case "delete_file":
		return acpsdk.ToolKindDelete
	case "move_file":
		return acpsdk.ToolKindMove
	case "grep_search":
		return acpsdk.ToolKindSearch
	case "run_shell_command", "spawn_background_process", "kill_process":
		return acpsdk.ToolKindExecute
	case "fetch_url":
		return acpsdk.ToolKindFetch
	}
	if _, tool, ok := strings.Cut(name, ":"); ok {
		name = tool
	}
	words := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return r == '_' || r == '-' || r == '.' })
	for _, w := range words {
		switch w {
		case "search", "grep", "find", "query":
			return acpsdk.ToolKindSearch
		case "fetch", "http", "download", "browse", "url":
			return acpsdk.ToolKindFetch
		case "run", "exec", "execute", "shell", "command", "bash":
			return acpsdk.ToolKindExecute
		case "write", "edit", "replace", "create", "update", "patch", "insert":
			return acpsdk.ToolKindEdit
		case "delete", "remove", "rm":
			return acpsdk.ToolKindDelete
		case "move", "rename":
			return acpsdk.ToolKindMove
		case "read", "get", "list", "show", "cat", "view":
			return acpsdk.ToolKindRead
		}
	}
	return acpsdk.ToolKindOther
}

// toolArgs are the arguments of the built-in tools that say where a call
// acts and what it writes.
type toolArgs struct {
	FilePath        string `json:"file_path"`
	DirPath         string `json:"dir_path"`
	SourcePath      string `json:"source_path"`
	DestinationPath string `json:"destination_path"`
	Content         string `json:"content"`
	OldString       string `json:"old_string"`
	NewString       string `json:"new_string"`
	Pattern         string `json:"pattern"`
	Command         string `json:"command"`
	URL             string `json:"url"`
	StartLine       *int   `json:"start_line"`
}

func parseArgs(raw json.RawMessage) (toolArgs, any) {
	var a toolArgs
	_ = json.Unmarshal(raw, &a)
	var input any
	if json.Unmarshal(raw, &input) != nil {
		input = string(raw)
	}
	return a, input
}

// abs is path p of a call made absolute against the workspace, as ACP
// wants its locations and diffs (a relative path resolves there, as the
// gate resolves it).
func abs(ws, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(ws, p)
}

// describeCall is a tool call as the editor shows it: title, kind,
// locations.
func describeCall(ws, name string, raw json.RawMessage) (title string, kind acpsdk.ToolKind, locs []acpsdk.ToolCallLocation) {
	a, _ := parseArgs(raw)
	kind = kindOf(name)
	loc := func(p string, line *int) {
		if p != "" {
			locs = append(locs, acpsdk.ToolCallLocation{Path: abs(ws, p), Line: line})
		}
	}
	switch name {
	case "read_file":
		title = "Read " + a.FilePath
		loc(a.FilePath, a.StartLine)
	case "write_file":
		title = "Write " + a.FilePath
		loc(a.FilePath, nil)
	case "replace_in_file":
		title = "Edit " + a.FilePath
		loc(a.FilePath, nil)
	case "delete_file":
		title = "Delete " + a.FilePath
		loc(a.FilePath, nil)
	case "move_file":
		title = fmt.Sprintf("Move %s to %s", a.SourcePath, a.DestinationPath)
		loc(a.SourcePath, nil)
		loc(a.DestinationPath, nil)
	case "create_directory":
		title = "Create directory " + a.DirPath
		loc(a.DirPath, nil)
	case "list_directory":
		title = "List " + a.DirPath
		loc(a.DirPath, nil)
	case "grep_search":
		title = fmt.Sprintf("Search for %q", a.Pattern)
		loc(a.DirPath, nil)
	case "run_shell_command", "spawn_background_process":
		title = "Run " + oneLine(a.Command, 120)
	case "fetch_url":
		title = "Fetch " + a.URL
	}
	if strings.TrimSpace(title) == "" || strings.HasSuffix(title, " ") {
		title = name
	}
	return title, kind, locs
}

// diffOf is the diff an edit call makes, from its arguments: write_file's
// new content against old (the file's text before, when known),
// replace_in_file's old and new strings. ok is false for any other call.
func diffOf(ws, name string, raw json.RawMessage, old *string) (acpsdk.ToolCallContent, bool) {
	a, _ := parseArgs(raw)
	switch {
	case name == "write_file" && a.FilePath != "":
		d := acpsdk.ToolDiffContent(abs(ws, a.FilePath), a.Content)
		d.Diff.OldText = old
		return d, true
	case name == "replace_in_file" && a.FilePath != "":
		return acpsdk.ToolDiffContent(abs(ws, a.FilePath), a.NewString, a.OldString), true
	}
	return acpsdk.ToolCallContent{}, false
}

// oneLine is s on one line, cut to n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
