package manifest

import (
	"slices"

	"github.com/astrid-go/astrid/ipc"
)

// editorTools are the tools whose provider may ask an editor for its
// buffers (ipc.EditorBufferRequest).
var editorTools = []string{"read_file", "write_file"}

// AsksEditor reports whether [publish] pattern p could put a request on
// an editor session's buffer topic (ipc.EditorBufferPattern): the editor
// answers with the person's authority, for any path, so only the provider
// of the file tools, whose grants checked the path first, may ask.
func AsksEditor(p string) bool {
	return ipc.ValidatePattern(p) == nil && ipc.PatternsOverlap(p, ipc.RouteMatcher, ipc.EditorBufferPattern, ipc.InterceptorMatcher)
}

// checkEditorBuffers refuses, at its key, a [publish] pattern that reaches
// the editor's buffers in a capsule that provides neither read_file nor
// write_file. A built-in keeps its tools, so an installed capsule cannot
// take them to get here.
func (c *checker) checkEditorBuffers(top *table, m *Manifest) {
	if slices.ContainsFunc(m.Tools, func(t Tool) bool { return slices.Contains(editorTools, t.Name) }) {
		return
	}
	for _, p := range m.PublishPatterns() {
		if !AsksEditor(p) {
			continue
		}
		at, path := pos{1, 1}, "publish"
		if t := top.sub("publish"); t != nil {
			path = t.keyPath(p)
			if kv := t.get(p); kv != nil {
				at = kv.keyAt
			}
		}
		c.errorf(at, path, "[publish] %q would let the capsule ask an editor (astrid acp) for any file with the person's authority, outside its grants; only the provider of read_file or write_file, which checks the path against its grants first, may", p)
	}
}
