package webview

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/astrid-go/astrid/ipc"
)

// Graph is who may publish what to whom.
type Graph struct {
	// Version changes whenever a node or its ACL does: the page fetches the
	// graph again when a tick names another version.
	Version string `json:"version"`
	Nodes   []Node `json:"nodes"`
	Edges   []Edge `json:"edges"`
}

// Edge says that From may publish a topic To subscribes to.
type Edge struct {
	From int `json:"from"` // index in Nodes
	To   int `json:"to"`
	// Via are up to maxVia pairs "publish pattern → subscribe pattern"
	// that overlap; Count is how many pairs there are.
	Via   []string `json:"via"`
	Count int      `json:"count"`
}

// maxVia bounds an edge's listed pattern pairs.
const maxVia = 4

// buildGraph draws an edge A→B wherever some topic is matched both by a
// [publish] pattern of A and a [subscribe] pattern of B (a handler's
// pattern read as an interceptor's, the others as a route's): the ACLs say
// the event may flow, not that it does.
func buildGraph(nodes []Node) Graph {
	g := Graph{Version: version(nodes), Nodes: nodes, Edges: []Edge{}}
	for i, a := range nodes {
		if len(a.Publish) == 0 {
			continue
		}
		for j, b := range nodes {
			if i == j {
				continue
			}
			var e *Edge
			for _, p := range a.Publish {
				if ipc.ValidatePattern(p) != nil {
					continue
				}
				for _, s := range b.Subscribe {
					m := ipc.RouteMatcher
					if s.Interceptor {
						m = ipc.InterceptorMatcher
					}
					if ipc.ValidatePattern(s.Pattern) != nil || !ipc.PatternsOverlap(p, ipc.RouteMatcher, s.Pattern, m) {
						continue
					}
					if e == nil {
						g.Edges = append(g.Edges, Edge{From: i, To: j})
						e = &g.Edges[len(g.Edges)-1]
					}
					e.Count++
					if len(e.Via) < maxVia {
						e.Via = append(e.Via, p+" → "+s.Pattern)
					}
				}
			}
		}
	}
	return g
}

// version is a digest of the nodes as served.
func version(nodes []Node) string {
	data, _ := json.Marshal(nodes) // a Node always encodes
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}
