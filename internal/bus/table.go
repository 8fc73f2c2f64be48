package bus

import (
	"strings"

	"github.com/astrid-go/astrid/ipc"
)

// table is an immutable snapshot of the routes and observer rings. Publish
// reads it through an atomic pointer; Subscribe and Close build a new one.
//
// Routes are indexed so that a publish costs a couple of map lookups no
// matter how many non-matching routes exist:
//   - a literal pattern is keyed by itself in exact;
//   - a wildcard pattern is keyed by one of its literal segments and that
//     segment's position, choosing the literal fewest patterns share, so
//     that a lookup yields few candidates to check with ipc.MatchRoute;
//   - a pattern with no literal segment at all sits in anyLiteral.
type table struct {
	routes     []*Route
	rings      []*Ring
	exact      map[string][]*Route
	byPosition [ipc.MaxTopicSegments]map[string][]*Route
	// positions is how many leading entries of byPosition a lookup visits.
	positions  int
	anyLiteral []*Route
}

var emptyTable = &table{}

type positionKey struct {
	pos     int
	literal string
}

func buildTable(routes []*Route, rings []*Ring) *table {
	t := &table{routes: routes, rings: rings}
	frequency := make(map[positionKey]int)
	for _, r := range routes {
		if !r.wildcard {
			continue
		}
		forEachSegment(r.spec.Pattern, func(pos int, seg string) {
			if seg != "*" {
				frequency[positionKey{pos, seg}]++
			}
		})
	}
	for _, r := range routes {
		if !r.wildcard {
			if t.exact == nil {
				t.exact = make(map[string][]*Route)
			}
			t.exact[r.spec.Pattern] = append(t.exact[r.spec.Pattern], r)
			continue
		}
		best, bestCount := positionKey{pos: -1}, 0
		forEachSegment(r.spec.Pattern, func(pos int, seg string) {
			if seg == "*" {
				return
			}
			k := positionKey{pos, seg}
			if c := frequency[k]; best.pos < 0 || c < bestCount {
				best, bestCount = k, c
			}
		})
		if best.pos < 0 {
			t.anyLiteral = append(t.anyLiteral, r)
			continue
		}
		m := t.byPosition[best.pos]
		if m == nil {
			m = make(map[string][]*Route)
			t.byPosition[best.pos] = m
		}
		m[best.literal] = append(m[best.literal], r)
		t.positions = max(t.positions, best.pos+1)
	}
	return t
}

// match calls deliver for every route whose pattern matches topic.
func (t *table) match(topic string, deliver func(*Route)) {
	for _, r := range t.exact[topic] {
		deliver(r)
	}
	if t.positions > 0 {
		pos, rest := 0, topic
		for pos < t.positions {
			seg, tail, more := strings.Cut(rest, ".")
			if m := t.byPosition[pos]; m != nil {
				for _, r := range m[seg] {
					if ipc.MatchRoute(r.spec.Pattern, topic) {
						deliver(r)
					}
				}
			}
			if !more {
				break
			}
			pos, rest = pos+1, tail
		}
	}
	for _, r := range t.anyLiteral {
		if ipc.MatchRoute(r.spec.Pattern, topic) {
			deliver(r)
		}
	}
}

func forEachSegment(pattern string, fn func(pos int, seg string)) {
	for pos := 0; ; pos++ {
		seg, rest, more := strings.Cut(pattern, ".")
		fn(pos, seg)
		if !more {
			return
		}
		pattern = rest
	}
}
