package runtime

import (
	"fmt"
	"slices"
	"strings"

	"github.com/astrid-go/astrid/manifest"
)

// Order sorts candidates so that every capsule comes after the providers of
// its imports, and uplinks come first wherever their own imports allow.
// Among capsules free to go, discovery order is kept. A capsule whose
// required import no other capsule meets (no provider, a provider of the
// wrong version, or one that cannot load itself) is left out with a Problem
// naming the import; so is every capsule on a dependency cycle, with the
// cycle named. Optional imports may stay unmet. The rest still load.
func Order(cands []*Candidate) ([]*Candidate, []Problem) {
	failed := map[string]error{}
	for {
		failUnmet(cands, failed)
		ordered, stuck := kahn(cands, failed)
		if len(stuck) == 0 {
			var problems []Problem
			for _, c := range cands {
				if err, ok := failed[c.ID()]; ok {
					problems = append(problems, Problem{ID: c.ID(), Dir: c.Dir, Err: err})
				}
			}
			return ordered, problems
		}
		cycle := rotateToFirst(findCycle(stuck, cands, failed), cands)
		text := strings.Join(append(slices.Clone(cycle), cycle[0]), " -> ")
		for _, id := range cycle {
			failed[id] = fmt.Errorf("capsule %s: dependency cycle %s", id, text)
		}
	}
}

// providers returns the candidates other than c that meet imp and have not
// failed.
func providers(imp manifest.Import, c *Candidate, cands []*Candidate, failed map[string]error) []*Candidate {
	var out []*Candidate
	for _, p := range cands {
		if p == c || failed[p.ID()] != nil {
			continue
		}
		for _, e := range p.Manifest.Exports {
			if e.Name == imp.Name && manifest.CheckRequirement(imp.Requirement, e.Version) == nil {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// failUnmet marks every capsule with an unmet required import as failed,
// until no more fail (a failed provider can leave its consumers unmet).
func failUnmet(cands []*Candidate, failed map[string]error) {
	for changed := true; changed; {
		changed = false
		for _, c := range cands {
			if failed[c.ID()] != nil {
				continue
			}
			for _, imp := range c.Manifest.Imports {
				if imp.Optional || len(providers(imp, c, cands, failed)) > 0 {
					continue
				}
				failed[c.ID()] = fmt.Errorf("capsule %s: required import %s %s is not met: %s",
					c.ID(), imp.Name, imp.Requirement, whyUnmet(imp, c, cands, failed))
				changed = true
				break
			}
		}
	}
}

// whyUnmet explains an unmet import: who exports the interface, and at
// which version or with what failure.
func whyUnmet(imp manifest.Import, c *Candidate, cands []*Candidate, failed map[string]error) string {
	var near []string
	for _, p := range cands {
		if p == c {
			continue
		}
		for _, e := range p.Manifest.Exports {
			if e.Name != imp.Name {
				continue
			}
			if failed[p.ID()] != nil && manifest.CheckRequirement(imp.Requirement, e.Version) == nil {
				near = append(near, fmt.Sprintf("%s exports %s but cannot load", p.ID(), e.Version))
			} else {
				near = append(near, fmt.Sprintf("%s exports %s", p.ID(), e.Version))
			}
		}
	}
	if len(near) == 0 {
		return "no capsule exports " + imp.Name
	}
	return strings.Join(near, "; ")
}

// kahn orders the candidates that have not failed; stuck are those left on
// or behind a cycle.
func kahn(cands []*Candidate, failed map[string]error) (ordered []*Candidate, stuck []*Candidate) {
	var live []*Candidate
	for _, c := range cands {
		if failed[c.ID()] == nil {
			live = append(live, c)
		}
	}
	indeg := map[*Candidate]int{}
	next := map[*Candidate][]*Candidate{}
	for _, c := range live {
		seen := map[*Candidate]bool{}
		for _, imp := range c.Manifest.Imports {
			for _, p := range providers(imp, c, cands, failed) {
				if !seen[p] {
					seen[p] = true
					indeg[c]++
					next[p] = append(next[p], c)
				}
			}
		}
	}
	done := map[*Candidate]bool{}
	for len(ordered) < len(live) {
		pick := (*Candidate)(nil)
		for _, c := range live {
			if done[c] || indeg[c] > 0 {
				continue
			}
			if pick == nil || (c.Manifest.Capabilities.Uplink && !pick.Manifest.Capabilities.Uplink) {
				pick = c
			}
		}
		if pick == nil {
			break
		}
		done[pick] = true
		ordered = append(ordered, pick)
		for _, n := range next[pick] {
			indeg[n]--
		}
	}
	for _, c := range live {
		if !done[c] {
			stuck = append(stuck, c)
		}
	}
	return ordered, stuck
}

// findCycle returns one dependency cycle among stuck capsules, in
// provider-to-consumer order. Every stuck capsule waits on a stuck provider,
// so walking from consumer to provider must come back to a capsule already
// seen.
func findCycle(stuck []*Candidate, cands []*Candidate, failed map[string]error) []string {
	isStuck := map[*Candidate]bool{}
	for _, c := range stuck {
		isStuck[c] = true
	}
	pos := map[*Candidate]int{}
	var path []*Candidate
	c := stuck[0]
	for {
		if i, seen := pos[c]; seen {
			loop := path[i:]
			ids := make([]string, len(loop))
			// path runs consumer → provider; name the cycle the other way.
			for j, x := range loop {
				ids[len(loop)-1-j] = x.ID()
			}
			return ids
		}
		pos[c] = len(path)
		path = append(path, c)
		c = stuckProvider(c, isStuck, cands, failed)
	}
}

func stuckProvider(c *Candidate, isStuck map[*Candidate]bool, cands []*Candidate, failed map[string]error) *Candidate {
	for _, imp := range c.Manifest.Imports {
		for _, p := range providers(imp, c, cands, failed) {
			if isStuck[p] {
				return p
			}
		}
	}
	panic("runtime: a stuck capsule has no stuck provider") // Kahn's invariant
}

// rotateToFirst starts the cycle at its member discovered first, so that it
// is always named the same way.
func rotateToFirst(cycle []string, cands []*Candidate) []string {
	best, bestPos := 0, len(cands)
	for i, id := range cycle {
		for pos, c := range cands {
			if c.ID() == id && pos < bestPos {
				best, bestPos = i, pos
			}
		}
	}
	return append(slices.Clone(cycle[best:]), cycle[:best]...)
}
