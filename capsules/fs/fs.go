// Package fs is the built-in file-system tool capsule: read_file,
// write_file, replace_in_file, create_directory, delete_file, move_file,
// list_directory and grep_search, with upstream's arguments and messages
// (spec/capsules-cli.md §5.1). Every path is checked by the host against the
// capsule's grants (the workspace, `*`); writes go straight to disk, except
// that read_file and write_file of an agent turn whose frontend is an
// editor offering its buffers (astrid acp) use the editor's, once the
// grants allowed the path (editor.go).
package fs

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// Manifest is the capsule's Capsule.toml.
//
//go:embed Capsule.toml
var Manifest []byte

// Limits of the tools (upstream's figures).
const (
	maxMoveBytes   = 10 << 20
	maxGrepMatches = 100
	maxGrepFiles   = 1000
	maxGrepDepth   = 20
)

// New returns the capsule's code.
func New() *sdk.Capsule {
	c := sdk.New("File-system tools for the workspace")
	sdk.Tool(c, "read_file", "Read a file. With start_line and end_line (1-based, inclusive), only those lines.", readFile)
	sdk.Tool(c, "write_file", "Create or overwrite a file with content. The parent directory must exist.", writeFile, sdk.Mutable())
	sdk.Tool(c, "replace_in_file", "Replace old_string, which must occur exactly once in the file, with new_string.", replaceInFile, sdk.Mutable())
	sdk.Tool(c, "create_directory", "Create a directory (one level; the parent must exist).", createDirectory, sdk.Mutable())
	sdk.Tool(c, "delete_file", "Delete a file (not a directory).", deleteFile, sdk.Mutable())
	sdk.Tool(c, "move_file", "Move a file to destination_path, which must not exist yet.", moveFile, sdk.Mutable())
	sdk.Tool(c, "list_directory", "List the names of the entries of a directory, as a JSON array.", listDirectory)
	c.Handle(ipc.AgentToolStartedTopic, "tool_started", handleToolStarted)
	c.Handle(ipc.AgentToolFinishedTopic, "tool_finished", handleToolFinished)
	c.Publishes(ipc.EditorBufferPattern)
	c.Subscribes(ipc.EditorBufferReplyPattern)
	sdk.Tool(c, "grep_search", "Search files under dir_path (default the workspace) for lines containing pattern (plain text, not a regular expression).", grepSearch)
	return c
}

type readFileArgs struct {
	FilePath  string `json:"file_path" desc:"path of the file to read"`
	StartLine *int   `json:"start_line,omitempty" desc:"first line to return, 1-based"`
	EndLine   *int   `json:"end_line,omitempty" desc:"last line to return, inclusive"`
}

func readFile(c *sdk.Call, a readFileArgs) (string, error) {
	data, err := c.FSRead(a.FilePath)
	if err != nil {
		return "", err
	}
	text := string(data)
	// The grants allowed the read: the editor's text, unsaved changes
	// and all, replaces the disk's when the session has one.
	if buf, err := editorRead(c, a.FilePath); err == nil {
		text = buf
	}
	if a.StartLine == nil && a.EndLine == nil {
		return text, nil
	}
	lines := strings.Split(text, "\n")
	start, end := 1, len(lines)
	if a.StartLine != nil {
		start = *a.StartLine
	}
	if a.EndLine != nil {
		end = *a.EndLine
	}
	if start < 1 {
		start = 1
	}
	if end > len(lines) {
		end = len(lines)
	}
	if start > end {
		return "", nil
	}
	return strings.Join(lines[start-1:end], "\n"), nil
}

type writeFileArgs struct {
	FilePath string `json:"file_path" desc:"path of the file to write"`
	Content  string `json:"content" desc:"the file's new content"`
}

func writeFile(c *sdk.Call, a writeFileArgs) (string, error) {
	switch err := editorWrite(c, a.FilePath, a.Content); {
	case err == nil:
		return fmt.Sprintf("Successfully wrote to %s", a.FilePath), nil
	case !errors.Is(err, errNoEditor):
		return "", err
	}
	if err := c.FSWrite(a.FilePath, []byte(a.Content)); err != nil {
		return "", err
	}
	return fmt.Sprintf("Successfully wrote to %s", a.FilePath), nil
}

type replaceArgs struct {
	FilePath  string `json:"file_path" desc:"path of the file to edit"`
	OldString string `json:"old_string" desc:"exact text to replace; must occur exactly once"`
	NewString string `json:"new_string" desc:"replacement text"`
}

func replaceInFile(c *sdk.Call, a replaceArgs) (string, error) {
	if a.OldString == "" {
		return "", fmt.Errorf("old_string must not be empty")
	}
	data, err := c.FSRead(a.FilePath)
	if err != nil {
		return "", err
	}
	text := string(data)
	switch n := strings.Count(text, a.OldString); n {
	case 0:
		//lint:ignore ST1005 upstream's wording, kept verbatim: it is what the model reads
		return "", fmt.Errorf("Exact string not found in %s", a.FilePath)
	case 1:
	default:
		//lint:ignore ST1005 upstream's wording, kept verbatim: it is what the model reads
		return "", fmt.Errorf("Found %d occurrences of the string in %s. Please be more specific.", n, a.FilePath)
	}
	if err := c.FSWrite(a.FilePath, []byte(strings.Replace(text, a.OldString, a.NewString, 1))); err != nil {
		return "", err
	}
	return fmt.Sprintf("Successfully replaced text in %s", a.FilePath), nil
}

type dirArgs struct {
	DirPath string `json:"dir_path" desc:"path of the directory"`
}

func createDirectory(c *sdk.Call, a dirArgs) (string, error) {
	if err := c.FSMkdir(a.DirPath); err != nil {
		return "", err
	}
	return fmt.Sprintf("Successfully created directory %s", a.DirPath), nil
}

type fileArgs struct {
	FilePath string `json:"file_path" desc:"path of the file"`
}

func deleteFile(c *sdk.Call, a fileArgs) (string, error) {
	fi, err := c.FSStat(a.FilePath)
	if err != nil {
		if hostapi.CodeOf(err) == hostapi.CodeNotFound {
			return "", fmt.Errorf("%s: file does not exist", a.FilePath)
		}
		return "", err
	}
	if fi.IsDir {
		return "", fmt.Errorf("%s is a directory; delete_file removes files only", a.FilePath)
	}
	if err := c.FSRemove(a.FilePath); err != nil {
		return "", err
	}
	return fmt.Sprintf("Successfully deleted %s", a.FilePath), nil
}

type moveArgs struct {
	SourcePath      string `json:"source_path" desc:"file to move"`
	DestinationPath string `json:"destination_path" desc:"where to move it; must not exist"`
}

func moveFile(c *sdk.Call, a moveArgs) (string, error) {
	fi, err := c.FSStat(a.SourcePath)
	if err != nil {
		return "", err
	}
	if fi.IsDir {
		return "", fmt.Errorf("%s is a directory; move_file moves files only", a.SourcePath)
	}
	if fi.Size > maxMoveBytes {
		return "", fmt.Errorf("%s is %d bytes; move_file moves files of at most %d bytes", a.SourcePath, fi.Size, maxMoveBytes)
	}
	if _, err := c.FSStat(a.DestinationPath); err == nil {
		return "", fmt.Errorf("%s already exists", a.DestinationPath)
	} else if hostapi.CodeOf(err) != hostapi.CodeNotFound {
		return "", err
	}
	if err := c.FSRename(a.SourcePath, a.DestinationPath); err != nil {
		return "", err
	}
	return fmt.Sprintf("Successfully moved %s to %s", a.SourcePath, a.DestinationPath), nil
}

func listDirectory(c *sdk.Call, a dirArgs) (string, error) {
	entries, err := c.FSList(a.DirPath)
	if err != nil {
		return "", err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name
	}
	out, err := json.Marshal(names)
	return string(out), err
}

type grepArgs struct {
	Pattern string `json:"pattern" desc:"text to search for (plain substring)"`
	DirPath string `json:"dir_path,omitempty" desc:"directory to search, default the workspace"`
}

func grepSearch(c *sdk.Call, a grepArgs) (string, error) {
	if a.Pattern == "" {
		return "", fmt.Errorf("pattern must not be empty")
	}
	dir := a.DirPath
	if dir == "" {
		dir = "."
	}
	g := grep{c: c, pattern: a.Pattern}
	if err := g.walk(dir, 0); err != nil {
		return "", err
	}
	if len(g.matches) == 0 {
		return "No matches found.", nil
	}
	return strings.Join(g.matches, "\n"), nil
}

type grep struct {
	c       *sdk.Call
	pattern string
	files   int
	matches []string
}

func (g *grep) full() bool { return len(g.matches) >= maxGrepMatches || g.files >= maxGrepFiles }

func (g *grep) walk(dir string, depth int) error {
	if depth > maxGrepDepth || g.full() {
		return nil
	}
	entries, err := g.c.FSList(dir)
	if err != nil {
		if depth == 0 {
			return err
		}
		return nil // unreadable or refused directories below the root (Astrid's home in a workspace of ~) are skipped
	}
	for _, e := range entries {
		if g.full() {
			return nil
		}
		p := e.Name
		if dir != "." {
			p = strings.TrimSuffix(dir, "/") + "/" + e.Name
		}
		if e.IsDir {
			if err := g.walk(p, depth+1); err != nil {
				return err
			}
			continue
		}
		g.files++
		data, err := g.c.FSRead(p)
		if err != nil {
			continue
		}
		for i, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, g.pattern) {
				g.matches = append(g.matches, fmt.Sprintf("%s:%d:%s", p, i+1, line))
				if g.full() {
					return nil
				}
			}
		}
	}
	return nil
}
