package chatui

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/astrid-go/astrid/ipc"
)

// Bounds of a write approval's diff.
const (
	maxDiffLines     = 14        // lines of +/- shown; the rest is counted
	maxDiffFileBytes = 256 << 10 // a larger current file is not compared
	maxLCSCells      = 250_000   // lines(old) × lines(new) compared exactly
)

// approvalDiff is a question about write_file or replace_in_file shown as
// the change it makes: the file, then removed lines in red and added ones
// in green (a write compared with the file as it is in the workspace).
// nil when q is about anything else or its arguments were cut past
// reading (the question then shows them as text).
func (m *Model) approvalDiff(q ipc.ApprovalRequired) []string {
	var args struct {
		FilePath  *string `json:"file_path"`
		Content   *string `json:"content"`
		OldString *string `json:"old_string"`
		NewString *string `json:"new_string"`
	}
	if json.Unmarshal([]byte(q.Resource), &args) != nil || args.FilePath == nil {
		return nil
	}
	var before, after []string
	header := shownLine(*args.FilePath)
	switch {
	case q.Action == "replace_in_file" && args.OldString != nil && args.NewString != nil:
		before, after = splitLines(*args.OldString), splitLines(*args.NewString)
	case q.Action == "write_file" && args.Content != nil:
		after = splitLines(*args.Content)
		switch old, err := m.currentFile(*args.FilePath); {
		case err == nil:
			before = splitLines(old)
		case os.IsNotExist(err):
			header += styled(faint, " (new file)")
		default:
			header += styled(faint, " (its current content is not shown: "+shownLine(err.Error())+")")
		}
	default:
		return nil
	}
	lines := []string{m.fit("  " + styled(bold, q.Action+" ") + header)}
	var shown, more int
	for _, d := range diffLines(before, after) {
		if shown == maxDiffLines {
			more++
			continue
		}
		switch d[0] {
		case '-':
			lines = append(lines, m.fit("  "+styled(bad, "- "+shownText(d[1:]))))
		case '+':
			lines = append(lines, m.fit("  "+styled(good, "+ "+shownText(d[1:]))))
		default:
			continue
		}
		shown++
	}
	if shown == 0 {
		lines = append(lines, m.fit(styled(faint, "  (no change to the content)")))
	}
	if more > 0 {
		lines = append(lines, styled(faint, fmt.Sprintf("  … %d more changed lines", more)))
	}
	return lines
}

// shownText is one line of untrusted text, escaped, tabs as spaces.
func shownText(s string) string {
	return ipc.ApprovalText(strings.ReplaceAll(s, "\t", "    "), 0)
}

// currentFile reads path in the workspace, never outside it (os.Root:
// no "..", no symlink out), for the diff only.
func (m *Model) currentFile(path string) (string, error) {
	if m.workspaceDir == "" {
		return "", fmt.Errorf("no workspace known")
	}
	if filepath.IsAbs(path) {
		rel, err := filepath.Rel(m.workspaceDir, path)
		if err != nil || !filepath.IsLocal(rel) {
			return "", fmt.Errorf("outside the workspace")
		}
		path = rel
	}
	root, err := os.OpenRoot(m.workspaceDir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	f, err := root.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if fi.IsDir() || fi.Size() > maxDiffFileBytes {
		return "", fmt.Errorf("a directory or over %d KiB", maxDiffFileBytes>>10)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxDiffFileBytes+1))
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// diffLines is a line diff of a and b: each line prefixed " ", "-" or "+",
// by a longest common subsequence (all of a removed and all of b added
// when the two are too long to compare exactly).
func diffLines(a, b []string) []string {
	// Common head and tail need no table.
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	var out []string
	for _, l := range a[:head] {
		out = append(out, " "+l)
	}
	ma, mb := a[head:len(a)-tail], b[head:len(b)-tail]
	if len(ma)*len(mb) > maxLCSCells {
		for _, l := range ma {
			out = append(out, "-"+l)
		}
		for _, l := range mb {
			out = append(out, "+"+l)
		}
	} else {
		// lcs[i][j]: the longest common subsequence of ma[i:] and mb[j:].
		lcs := make([][]int, len(ma)+1)
		for i := range lcs {
			lcs[i] = make([]int, len(mb)+1)
		}
		for i := len(ma) - 1; i >= 0; i-- {
			for j := len(mb) - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < len(ma) || j < len(mb) {
			switch {
			case i < len(ma) && j < len(mb) && ma[i] == mb[j]:
				out = append(out, " "+ma[i])
				i, j = i+1, j+1
			case i < len(ma) && (j == len(mb) || lcs[i+1][j] >= lcs[i][j+1]):
				out = append(out, "-"+ma[i]) // removals before additions
				i++
			default:
				out = append(out, "+"+mb[j])
				j++
			}
		}
	}
	for _, l := range a[len(a)-tail:] {
		out = append(out, " "+l)
	}
	return out
}
