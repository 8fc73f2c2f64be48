package runtime

import (
	"errors"
	"slices"

	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/dispatch"
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
		name, _ := ipc.ToolNameFromExecuteTopic(i.Pattern)
		add(name)
	}
	slices.Sort(out)
	return out
}

// plumbingGranted applies the manifest's tool-plumbing rule (DESIGN §4c) to
// the ACL the capsule is about to get, engines' additions included, so that
// it holds for every engine and for a manifest whose diagnostics a caller
// did not read.
func plumbingGranted(m *manifest.Manifest, acl dispatch.CapsuleACL) error {
	if m.Capabilities.ToolMiddleware {
		return nil
	}
	intercepts := make([]string, 0, len(acl.Interceptors))
	for _, i := range acl.Interceptors {
		intercepts = append(intercepts, i.Pattern)
	}
	tools := make([]string, 0, len(m.Tools))
	for _, t := range m.Tools {
		tools = append(tools, t.Name)
	}
	var errs []error
	for _, v := range manifest.ToolPlumbingViolations(acl.Publish, intercepts, tools) {
		errs = append(errs, v)
	}
	return errors.Join(errs...)
}
