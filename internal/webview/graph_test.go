package webview

import (
	"slices"
	"testing"
)

// An edge exists exactly where a [publish] pattern and a [subscribe]
// pattern can match one topic; an interceptor's pattern takes only topics
// of its own length.
func TestGraphEdges(t *testing.T) {
	nodes := []Node{
		{ID: "a", Publish: []string{"tool.v1.execute.*", "a.note"}},
		{ID: "route", Subscribe: []Subscription{{Pattern: "tool.v1.execute.read_file"}}},
		{ID: "deep", Subscribe: []Subscription{{Pattern: "tool.v1.*"}}},
		{ID: "icpt-short", Subscribe: []Subscription{{Pattern: "tool.v1.*", Interceptor: true}}},
		{ID: "icpt-exact", Subscribe: []Subscription{{Pattern: "tool.v1.execute.*", Interceptor: true}}},
		{ID: "other", Subscribe: []Subscription{{Pattern: "llm.v1.*"}, {Pattern: "a.note"}}},
		{ID: "silent", Subscribe: []Subscription{{Pattern: "nothing.here"}}},
		{ID: "bad", Publish: []string{"<b>", ""}, Subscribe: []Subscription{{Pattern: "<b>"}}},
	}
	g := buildGraph(nodes)
	var got []string
	for _, e := range g.Edges {
		got = append(got, nodes[e.From].ID+"→"+nodes[e.To].ID)
	}
	want := []string{"a→route", "a→deep", "a→icpt-exact", "a→other"}
	if !slices.Equal(got, want) {
		t.Fatalf("edges %v, want %v", got, want)
	}
	if e := g.Edges[3]; e.Count != 1 || !slices.Equal(e.Via, []string{"a.note → a.note"}) {
		t.Fatalf("a→other via %v (%d)", e.Via, e.Count)
	}
	if g.Version == "" || g.Version != buildGraph(nodes).Version {
		t.Fatal("the version is not a function of the nodes")
	}
	nodes[1].Subscribe[0].Pattern = "tool.v1.execute.write_file"
	if buildGraph(nodes).Version == g.Version {
		t.Fatal("a changed ACL keeps the graph's version: the page would not refetch it")
	}
}

// 200 capsules make their 400 edges, and an edge lists at most maxVia
// pattern pairs however many there are.
func TestGraphScales(t *testing.T) {
	g := buildGraph(syntheticNodes(200))
	if len(g.Nodes) != 201 || len(g.Edges) != 400 {
		t.Fatalf("%d nodes, %d edges; want 201 and 400", len(g.Nodes), len(g.Edges))
	}
	var pubs []string
	for i := range 10 {
		pubs = append(pubs, "x.p"+string(rune('a'+i)))
	}
	many := []Node{{ID: "p", Publish: pubs}, {ID: "s", Subscribe: []Subscription{{Pattern: "x.*"}}}}
	e := buildGraph(many).Edges[0]
	if e.Count != 10 || len(e.Via) != maxVia {
		t.Fatalf("edge count %d via %d, want 10 and %d", e.Count, len(e.Via), maxVia)
	}
}
