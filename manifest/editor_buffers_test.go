package manifest

import (
	"strings"
	"testing"
)

// Every [publish] key that could ask an editor for a buffer is refused to
// a capsule that does not provide read_file or write_file, whatever grant
// it holds (tool plumbing included); the provider of the file tools may
// ask, and the topics beside it stay open.
func TestOnlyTheFileToolsAskTheEditor(t *testing.T) {
	asking := []string{
		"astrid.v1.editor.buffer.*",
		"astrid.v1.editor.buffer.s-0123456789abcdef0123456789abcdef",
		"astrid.v1.editor.*",
		"astrid.v1.*",
		"astrid.*",
		"*.v1.editor.buffer.*",
		"astrid.*.editor.buffer.*",
		"*.*",
	}
	for _, p := range asking {
		for _, caps := range []string{"", "[capabilities]\ntool_middleware = true\nfs_read = [\"*\"]\n"} {
			body := head + caps + "[publish]\n\"" + p + "\" = \"opaque\"\n[[tool]]\nname = \"grep_files\"\ndescription_for_llm = \"x\"\n"
			_, diags := Parse([]byte(body), "Capsule.toml", "")
			found := false
			for _, d := range diags {
				found = found || d.Severity == Error && strings.Contains(d.Message, "ask an editor")
			}
			if !found {
				t.Errorf("[publish] %q (%q) parsed without the editor error:\n%s", p, caps, render(diags))
			}
		}
	}
	for _, tool := range []string{"read_file", "write_file"} {
		body := head + "[publish]\n\"astrid.v1.editor.buffer.*\" = \"opaque\"\n[[tool]]\nname = \"" + tool + "\"\ndescription_for_llm = \"x\"\n"
		if _, diags := Parse([]byte(body), "Capsule.toml", ""); hasEditorError(diags) {
			t.Errorf("the provider of %s may not ask the editor:\n%s", tool, render(diags))
		}
	}
	for _, p := range []string{"astrid.v1.editor.reply.*", "astrid.v1.editor", "astrid.v1.approval.response.*"} {
		body := head + "[publish]\n\"" + p + "\" = \"opaque\"\n"
		if _, diags := Parse([]byte(body), "Capsule.toml", ""); diags.HasErrors() {
			t.Errorf("[publish] %q refused:\n%s", p, render(diags))
		}
	}
}

func hasEditorError(diags Diagnostics) bool {
	for _, d := range diags {
		if d.Severity == Error && strings.Contains(d.Message, "ask an editor") {
			return true
		}
	}
	return false
}
