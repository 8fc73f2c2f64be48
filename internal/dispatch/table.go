package dispatch

import (
	"cmp"
	"slices"
	"strings"

	"github.com/astrid-go/astrid/ipc"
)

// Interceptor is one interceptor binding from a capsule's manifest: events on
// topics matching Pattern (equal depth, `*` one segment) are handed to
// Handler. Lower priorities run first; upstream's default is 100.
type Interceptor struct {
	Pattern  string
	Handler  string
	Priority uint32
}

// link is an interceptor bound to its registered capsule: one step of a
// chain or one branch of a fan-out.
type link struct {
	capsule  *capsule
	pattern  string
	handler  string
	priority uint32
}

func compareLinks(a, b *link) int {
	return cmp.Or(
		cmp.Compare(a.priority, b.priority),
		strings.Compare(a.capsule.id, b.capsule.id),
		strings.Compare(a.handler, b.handler),
		strings.Compare(a.pattern, b.pattern),
	)
}

// shape buckets interceptor patterns so a topic is compared only with the
// patterns that could match it: the same segment count and the same first
// segment (or `*` there).
type shape struct {
	segments int
	first    string
}

func shapeOf(s string) shape {
	n := strings.Count(s, ".") + 1
	first, _, _ := strings.Cut(s, ".")
	return shape{segments: n, first: first}
}

// table is an immutable snapshot of every registered interceptor, replaced
// wholesale (copy-on-write) on Register and Unregister so that publishes read
// it without locking.
type table struct {
	buckets map[shape][]*link // each sorted by compareLinks
	// owners remembers answers to "who intercepts topic T" (Interceptors)
	// for this snapshot: the router asks it twice per tool call, and an
	// answer stays right exactly as long as the snapshot is current.
	owners ownersCache
}

func buildTable(capsules map[string]*capsule) *table {
	t := &table{buckets: make(map[shape][]*link)}
	for _, c := range capsules {
		for _, ic := range c.interceptors {
			sh := shapeOf(ic.Pattern)
			t.buckets[sh] = append(t.buckets[sh], &link{capsule: c, pattern: ic.Pattern, handler: ic.Handler, priority: ic.Priority})
		}
	}
	for _, b := range t.buckets {
		slices.SortFunc(b, compareLinks)
	}
	return t
}

// match returns the links whose pattern matches topic by the interceptor
// matcher, sorted by (priority, capsule id, handler). It allocates only when
// something matches.
func (t *table) match(topic string) []*link {
	if len(t.buckets) == 0 {
		return nil
	}
	sh := shapeOf(topic)
	exact := t.buckets[sh]
	var wild []*link
	if sh.first != "*" {
		wild = t.buckets[shape{segments: sh.segments, first: "*"}]
	}
	var out []*link
	i, j := 0, 0
	// Merge the two sorted buckets, keeping only matches.
	for i < len(exact) || j < len(wild) {
		var l *link
		if j >= len(wild) || i < len(exact) && compareLinks(exact[i], wild[j]) <= 0 {
			l, i = exact[i], i+1
		} else {
			l, j = wild[j], j+1
		}
		if ipc.MatchInterceptor(l.pattern, topic) {
			out = append(out, l)
		}
	}
	return out
}

// samePriority reports whether every link shares one priority, the case in
// which they fan out instead of forming a chain.
func samePriority(links []*link) bool {
	for _, l := range links[1:] {
		if l.priority != links[0].priority {
			return false
		}
	}
	return true
}
