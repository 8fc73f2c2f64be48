package runtime

import (
	"slices"
	"strings"
	"testing"
)

// Graph draws each import with the capsules meeting it, each capsule's
// dependents, load order first, and names why a capsule would not load.
func TestGraph(t *testing.T) {
	nodes := Graph([]*Candidate{
		node("app", false, []string{"x:store ^1", "x:cache ^2?"}, nil),
		node("store-b", false, nil, []string{"x:store 1.4.0"}),
		node("store-a", false, nil, []string{"x:store 1.2.0"}),
		node("old", false, []string{"x:store ^2"}, nil),
		node("loop-1", false, []string{"x:two 1"}, []string{"x:one 1.0.0"}),
		node("loop-2", false, []string{"x:one 1"}, []string{"x:two 1.0.0"}),
	})
	var order []string
	by := map[string]Node{}
	for _, n := range nodes {
		order = append(order, n.ID)
		by[n.ID] = n
	}
	if want := []string{"store-b", "store-a", "app", "old", "loop-1", "loop-2"}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	app := by["app"]
	if len(app.Imports) != 2 || !slices.Equal(app.Imports[0].Providers, []string{"store-b", "store-a"}) || app.Imports[0].Unmet != "" {
		t.Errorf("app's imports: %+v", app.Imports)
	}
	if d := app.Imports[1]; !d.Optional || len(d.Providers) != 0 || d.Unmet != "no capsule exports x:cache" || app.Problem != "" {
		t.Errorf("app's optional import: %+v, problem %q", d, app.Problem)
	}
	if !slices.Equal(by["store-a"].Dependents, []string{"app"}) || !slices.Equal(by["store-b"].Dependents, []string{"app"}) {
		t.Errorf("dependents: store-a %v, store-b %v", by["store-a"].Dependents, by["store-b"].Dependents)
	}
	old := by["old"]
	if !strings.Contains(old.Problem, "required import x:store ^2 is not met") || !strings.Contains(old.Imports[0].Unmet, "store-b exports 1.4.0") {
		t.Errorf("old: %+v", old)
	}
	if !strings.Contains(by["loop-1"].Problem, "dependency cycle loop-1 -> loop-2 -> loop-1") || !slices.Equal(by["loop-1"].Dependents, []string{"loop-2"}) {
		t.Errorf("loop-1: %+v", by["loop-1"])
	}
}
