package runtime

import (
	"github.com/astrid-go/astrid/manifest"
)

// Node is one capsule of the dependency graph its manifests' [imports] and
// [exports] draw.
type Node struct {
	ID      string            `json:"id"`
	Version string            `json:"version"`
	Dir     string            `json:"dir,omitempty"` // "" for a built-in
	Builtin bool              `json:"builtin,omitempty"`
	Exports []manifest.Export `json:"exports,omitempty"`
	Imports []Dependency      `json:"imports,omitempty"`
	// Dependents are the capsules one of whose imports this one meets.
	Dependents []string `json:"dependents,omitempty"`
	// Problem is why it would not load, as Order decides: an unmet
	// import, a cycle ("" when it would).
	Problem string `json:"problem,omitempty"`
}

// Dependency is one import and the capsules that meet it.
type Dependency struct {
	manifest.Import
	// Providers are the capsules exporting the interface at a version
	// the requirement accepts, in discovery order.
	Providers []string `json:"providers,omitempty"`
	// Unmet says who exports the interface at which version, when none
	// meets it ("" when one does).
	Unmet string `json:"unmet,omitempty"`
}

// Graph draws the dependency graph of cands, in load order (Order's), then
// the capsules Order leaves out, each with the problem it names. It reads
// manifests only: nothing is loaded.
func Graph(cands []*Candidate) []Node {
	ordered, problems := Order(cands)
	why := map[string]string{}
	for _, p := range problems {
		why[p.ID] = p.Err.Error()
	}
	all := append([]*Candidate(nil), ordered...)
	for _, c := range cands {
		if _, left := why[c.ID()]; left {
			all = append(all, c)
		}
	}
	nodes := make([]Node, 0, len(all))
	index := map[string]int{}
	for _, c := range all {
		n := Node{ID: c.ID(), Version: c.Manifest.Package.Version, Dir: c.Dir, Builtin: c.Builtin(), Exports: c.Manifest.Exports, Problem: why[c.ID()]}
		for _, imp := range c.Manifest.Imports {
			d := Dependency{Import: imp}
			for _, p := range providers(imp, c, cands, nil) {
				d.Providers = append(d.Providers, p.ID())
			}
			if len(d.Providers) == 0 {
				d.Unmet = whyUnmet(imp, c, cands, nil)
			}
			n.Imports = append(n.Imports, d)
		}
		index[n.ID] = len(nodes)
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		seen := map[string]bool{}
		for _, d := range n.Imports {
			for _, p := range d.Providers {
				if i, ok := index[p]; ok && !seen[p] {
					seen[p] = true
					nodes[i].Dependents = append(nodes[i].Dependents, n.ID)
				}
			}
		}
	}
	return nodes
}
