package install

import (
	"fmt"
	"slices"
	"strings"

	"github.com/astrid-go/astrid/internal/runtime"
	"github.com/astrid-go/astrid/manifest"
)

// checkTools refuses m when a tool it declares is provided by another
// capsule: a built-in (opts.Builtins) or an installed capsule of another
// id. The runtime would refuse it at load (a tool keeps its provider), so
// install says so first, instead of reporting "installed" for a capsule
// that cannot run. Reinstalling m's own id over itself is no conflict.
func checkTools(opts Options, m *manifest.Manifest) error {
	mine := m.ProvidedTools()
	if len(mine) == 0 {
		return nil
	}
	cands, _, err := runtime.Discover(opts.Builtins, opts.capsulesDir())
	if err != nil {
		return fmt.Errorf("install: list the tools already provided: %w", err)
	}
	var clashes []string
	hint := "rename the tool, or remove the other capsule first"
	for _, c := range cands {
		if c.ID() == m.ID() {
			continue
		}
		holder := "capsule " + c.ID() + " (installed in " + c.Dir + ")"
		if c.Builtin() {
			holder = "built-in capsule " + c.ID()
		}
		if c.Builtin() && slices.ContainsFunc(c.Manifest.ProvidedTools(), func(t string) bool { return slices.Contains(mine, t) }) {
			hint = "rename the tool (a built-in's tools cannot be taken over)"
		}
		for _, t := range c.Manifest.ProvidedTools() {
			if slices.Contains(mine, t) {
				clashes = append(clashes, fmt.Sprintf("tool %s is provided by %s", t, holder))
			}
		}
	}
	if len(clashes) == 0 {
		return nil
	}
	return fmt.Errorf("install: capsule %s cannot provide its tools: %s; a tool keeps its provider: %s (%w)",
		m.ID(), strings.Join(clashes, "; "), hint, ErrToolTaken)
}

// CheckTools is checkTools for `astrid capsule check`: the same refusal,
// before anything is installed, against the built-ins and the capsules
// installed under opts.Home.
func CheckTools(opts Options, m *manifest.Manifest) error { return checkTools(opts, m) }
