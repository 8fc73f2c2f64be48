package ipc

import "strings"

// Matcher says how a pattern is read: by MatchInterceptor (the same number
// of segments as the topic) or by MatchRoute (a trailing `.*` matching one
// or more segments).
type Matcher uint8

// The two ways a pattern is matched against a topic.
const (
	InterceptorMatcher Matcher = iota
	RouteMatcher
)

// PatternsOverlap reports whether some valid topic is matched both by
// pattern p read as pm reads it and by pattern q read as qm reads it: "can p
// match any topic q matches". A policy that refuses a family of topics asks
// it of every pattern a capsule declares, so that no wildcard reaches a
// refused topic unnoticed. Both patterns must pass ValidatePattern; a `*` in
// either stands for any one segment.
func PatternsOverlap(p string, pm Matcher, q string, qm Matcher) bool {
	ps, pOpen := overlapShape(p, pm)
	qs, qOpen := overlapShape(q, qm)
	n := min(len(ps), len(qs))
	for i := range n {
		if ps[i] != "*" && qs[i] != "*" && ps[i] != qs[i] {
			return false
		}
	}
	switch {
	case len(ps) == len(qs):
		return true
	case len(ps) < len(qs):
		// q's further segments are valid ones, which only an open p takes.
		return pOpen
	default:
		return qOpen
	}
}

// overlapShape is a pattern's segments and whether any number of further
// segments may follow them: MatchRoute reads a trailing `.*` after at least
// one other segment as "one or more", that is the `*` itself and then
// zero or more.
func overlapShape(pattern string, m Matcher) (segs []string, open bool) {
	segs = strings.Split(pattern, ".")
	open = m == RouteMatcher && len(segs) > 1 && segs[len(segs)-1] == "*"
	return segs, open
}
