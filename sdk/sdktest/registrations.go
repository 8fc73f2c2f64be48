package sdktest

import (
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/astrid-go/astrid/manifest"
	"github.com/astrid-go/astrid/sdk"
)

// CheckRegistrations fails t unless the capsule's sdk registrations and its
// manifest agree exactly: every handler bound in code is a [subscribe]
// entry with that handler and pattern and vice versa, every subscription
// made in code is a [subscribe] key, and the [publish] keys are exactly
// what the code publishes on. A mismatch is a tool that is advertised but
// never runs, or a grant nothing uses.
func CheckRegistrations(t testing.TB, manifestTOML []byte, c *sdk.Capsule) {
	t.Helper()
	for _, p := range registrationProblems(manifestTOML, c) {
		t.Error(p)
	}
}

func registrationProblems(manifestTOML []byte, c *sdk.Capsule) []string {
	m, diags := manifest.Parse(manifestTOML, "Capsule.toml", "")
	if err := diags.Err(false); err != nil {
		return []string{err.Error()}
	}
	reg := c.Registrations(m.ID())
	var problems []string

	var code, man []string
	for _, b := range reg.Interceptors {
		code = append(code, b.Pattern+" → "+b.Handler)
	}
	for _, i := range m.Interceptors() {
		man = append(man, i.Pattern+" → "+i.Handler)
	}
	problems = append(problems, diff("interceptor", code, man)...)

	var plain []string
	for _, s := range m.Subscribe {
		if s.Handler == "" {
			plain = append(plain, s.Pattern)
		}
	}
	problems = append(problems, diff("[subscribe] key without handler", reg.Subscribe, plain)...)
	problems = append(problems, diff("[publish] key", reg.Publish, m.PublishPatterns())...)
	return problems
}

// diff reports entries of code missing from the manifest and the reverse.
func diff(what string, code, man []string) []string {
	code, man = sorted(code), sorted(man)
	var out []string
	for _, c := range code {
		if !slices.Contains(man, c) {
			out = append(out, fmt.Sprintf("%s %q is registered in code but not declared in Capsule.toml", what, c))
		}
	}
	for _, m := range man {
		if !slices.Contains(code, m) {
			out = append(out, fmt.Sprintf("%s %q is declared in Capsule.toml but not registered in code", what, m))
		}
	}
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}
