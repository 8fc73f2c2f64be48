package runtime

import (
	"slices"
	"strings"

	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

// toolNames are the tools a capsule provides: its [[tool]] entries and the
// tool.v1.execute.<name> interceptors of its manifest and engines. A
// wildcard interceptor names no tool.
func toolNames(m *manifest.Manifest, s capsule.Surface) []string {
	var out []string
	add := func(name string) {
		if name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	for _, t := range m.Tools {
		add(t.Name)
	}
	for _, i := range append(m.Interceptors(), s.Interceptors...) {
		add(toolOfPattern(i.Pattern))
	}
	slices.Sort(out)
	return out
}

func toolOfPattern(pattern string) string {
	name, ok := strings.CutPrefix(pattern, ipc.ToolExecuteTopic(""))
	if !ok || pattern == ipc.ToolExecuteResultTopic || ipc.ValidateToolName(name) != nil {
		return ""
	}
	return name
}
