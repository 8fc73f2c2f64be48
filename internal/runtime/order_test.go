package runtime

import (
	"slices"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/manifest"
)

// node builds a candidate: imports are "name req" or "name req?" (optional),
// exports "name version".
func node(id string, uplink bool, imports, exports []string) *Candidate {
	m := &manifest.Manifest{Package: manifest.Package{Name: id, Version: "0.1.0"}}
	m.Capabilities.Uplink = uplink
	for _, s := range imports {
		name, req, _ := strings.Cut(s, " ")
		req, optional := strings.CutSuffix(req, "?")
		m.Imports = append(m.Imports, manifest.Import{Name: name, Requirement: req, Optional: optional})
	}
	for _, s := range exports {
		name, v, _ := strings.Cut(s, " ")
		m.Exports = append(m.Exports, manifest.Export{Name: name, Version: v})
	}
	return &Candidate{Manifest: m, Dir: "/capsules/" + id}
}

func ids(cs []*Candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID()
	}
	return out
}

func TestOrder(t *testing.T) {
	cases := []struct {
		name  string
		cands []*Candidate
		want  []string
		// fail maps a capsule left out to substrings of its error.
		fail map[string][]string
	}{
		{
			name:  "empty",
			cands: nil,
			want:  []string{},
		},
		{
			name:  "no dependencies keeps discovery order",
			cands: []*Candidate{node("c", false, nil, nil), node("a", false, nil, nil), node("b", false, nil, nil)},
			want:  []string{"c", "a", "b"},
		},
		{
			name: "provider before consumer",
			cands: []*Candidate{
				node("react", false, []string{"astrid:session ^1.0"}, nil),
				node("session", false, nil, []string{"astrid:session 1.5.3"}),
			},
			want: []string{"session", "react"},
		},
		{
			name: "every matching provider goes first",
			cands: []*Candidate{
				node("consumer", false, []string{"astrid:llm ^1"}, nil),
				node("openai", false, nil, []string{"astrid:llm 1.0.0"}),
				node("anthropic", false, nil, []string{"astrid:llm 1.2.0"}),
			},
			want: []string{"openai", "anthropic", "consumer"},
		},
		{
			name: "diamond",
			cands: []*Candidate{
				node("top", false, []string{"x:left 1", "x:right 1"}, nil),
				node("left", false, []string{"x:base 1"}, []string{"x:left 1.0.0"}),
				node("right", false, []string{"x:base 1"}, []string{"x:right 1.0.0"}),
				node("base", false, nil, []string{"x:base 1.0.0"}),
			},
			want: []string{"base", "left", "right", "top"},
		},
		{
			name: "uplinks first",
			cands: []*Candidate{
				node("fs", false, nil, nil),
				node("cli", true, nil, nil),
				node("router", false, nil, nil),
				node("gateway", true, nil, nil),
			},
			want: []string{"cli", "gateway", "fs", "router"},
		},
		{
			name: "an uplink waits for its own provider",
			cands: []*Candidate{
				node("cli", true, []string{"x:auth 1"}, nil),
				node("auth", false, nil, []string{"x:auth 1.0.0"}),
				node("fs", false, nil, nil),
			},
			want: []string{"auth", "cli", "fs"},
		},
		{
			name: "optional import may stay unmet",
			cands: []*Candidate{
				node("react", false, []string{"astrid:memory ^1.0?"}, nil),
			},
			want: []string{"react"},
		},
		{
			name: "met optional import still orders",
			cands: []*Candidate{
				node("react", false, []string{"astrid:memory ^1.0?"}, nil),
				node("memory", false, nil, []string{"astrid:memory 1.1.0"}),
			},
			want: []string{"memory", "react"},
		},
		{
			name: "unmet required import fails that capsule alone",
			cands: []*Candidate{
				node("react", false, []string{"astrid:session ^1.0"}, nil),
				node("fs", false, nil, nil),
			},
			want: []string{"fs"},
			fail: map[string][]string{"react": {"required import astrid:session ^1.0", "no capsule exports astrid:session"}},
		},
		{
			name: "version requirement unmet",
			cands: []*Candidate{
				node("react", false, []string{"astrid:session ^2.0"}, nil),
				node("session", false, nil, []string{"astrid:session 1.4.0"}),
			},
			want: []string{"session"},
			fail: map[string][]string{"react": {"astrid:session ^2.0", "session exports 1.4.0"}},
		},
		{
			name: "a self-export does not meet an import",
			cands: []*Candidate{
				node("loop", false, []string{"x:self 1"}, []string{"x:self 1.0.0"}),
			},
			want: []string{},
			fail: map[string][]string{"loop": {"x:self"}},
		},
		{
			name: "unmet import cascades to consumers",
			cands: []*Candidate{
				node("a", false, []string{"x:missing 1"}, []string{"x:a 1.0.0"}),
				node("b", false, []string{"x:a 1"}, nil),
				node("c", false, nil, nil),
			},
			want: []string{"c"},
			fail: map[string][]string{"a": {"x:missing"}, "b": {"x:a 1", "a exports 1.0.0 but cannot load"}},
		},
		{
			name: "two-node cycle",
			cands: []*Candidate{
				node("a", false, []string{"x:b 1"}, []string{"x:a 1.0.0"}),
				node("b", false, []string{"x:a 1"}, []string{"x:b 1.0.0"}),
				node("c", false, nil, nil),
			},
			want: []string{"c"},
			fail: map[string][]string{"a": {"dependency cycle", "a -> b -> a"}, "b": {"dependency cycle"}},
		},
		{
			name: "three-node cycle and a dependent",
			cands: []*Candidate{
				node("d", false, []string{"x:a 1"}, nil),
				node("a", false, []string{"x:c 1"}, []string{"x:a 1.0.0"}),
				node("b", false, []string{"x:a 1"}, []string{"x:b 1.0.0"}),
				node("c", false, []string{"x:b 1"}, []string{"x:c 1.0.0"}),
				node("free", false, nil, nil),
			},
			want: []string{"free"},
			fail: map[string][]string{
				"a": {"dependency cycle"},
				"b": {"dependency cycle"},
				"c": {"dependency cycle"},
				"d": {"x:a 1", "cannot load"},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, problems := Order(tc.cands)
			if g := ids(got); !slices.Equal(g, tc.want) {
				t.Errorf("order = %v, want %v", g, tc.want)
			}
			if len(problems) != len(tc.fail) {
				t.Errorf("problems = %v, want %d", problems, len(tc.fail))
			}
			for _, p := range problems {
				want, ok := tc.fail[p.ID]
				if !ok {
					t.Errorf("unexpected problem %s: %v", p.ID, p.Err)
					continue
				}
				for _, s := range want {
					if !strings.Contains(p.Err.Error(), s) {
						t.Errorf("%s: error %q does not mention %q", p.ID, p.Err, s)
					}
				}
			}
		})
	}
}

func TestOrderCycleIsNamedWhole(t *testing.T) {
	_, problems := Order([]*Candidate{
		node("a", false, []string{"x:c 1"}, []string{"x:a 1.0.0"}),
		node("b", false, []string{"x:a 1"}, []string{"x:b 1.0.0"}),
		node("c", false, []string{"x:b 1"}, []string{"x:c 1.0.0"}),
	})
	if len(problems) != 3 {
		t.Fatalf("problems = %v", problems)
	}
	msg := problems[0].Err.Error()
	// The cycle is named from any member; every member and the return to
	// the first appear.
	for _, cyc := range []string{"a -> b -> c -> a", "b -> c -> a -> b", "c -> a -> b -> c"} {
		if strings.Contains(msg, cyc) {
			return
		}
	}
	t.Errorf("error %q does not name the cycle a -> b -> c", msg)
}
