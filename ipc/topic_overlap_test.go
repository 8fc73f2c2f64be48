package ipc

import (
	"strings"
	"testing"
)

func TestPatternsOverlap(t *testing.T) {
	const (
		I = InterceptorMatcher
		R = RouteMatcher
	)
	tests := []struct {
		p    string
		pm   Matcher
		q    string
		qm   Matcher
		want bool
	}{
		{"tool.v1.request.execute", I, "tool.v1.request.execute", I, true},
		{"tool.v1.request.cancel", I, "tool.v1.request.execute", I, false},
		{"tool.v1.*", I, "tool.v1.request.execute", I, false}, // equal depth: three segments never match four
		{"tool.v1.*", R, "tool.v1.request.execute", I, true},  // one or more
		{"tool.*.request.execute", I, "tool.v1.request.execute", I, true},
		{"*.*.*.*", I, "tool.v1.request.execute", I, true},
		{"*", R, "tool.v1.request.execute", I, false}, // a lone `*` is one segment even for a route
		{"tool.v1.execute.*", I, "tool.v1.execute.*.result", I, false},
		{"tool.v1.execute.*", R, "tool.v1.execute.*.result", I, true},
		{"tool.v1.execute.*.*", I, "tool.v1.execute.*.result", I, true},
		{"tool.v1.execute.*.result", I, "tool.v1.execute.result", I, false},
		{"tool.v1.execute.read_file", I, "tool.v1.execute.*", I, true},
		{"tool.v1.execute.read_file.result", R, "tool.v1.execute.*", I, false},
		{"tool.v1.execute.read_file.*", R, "tool.v1.execute.*.result", I, true},
		{"tool.v1.execute.read_file.*", R, "tool.v1.execute.*", I, false},
		{"tool.v1.*", R, "tool.v1.execute.*", R, true},
		{"a.b", R, "a.*", R, true},
		{"a.b.c", I, "a.*", R, true},
		{"a", R, "a.*", R, false}, // a trailing `.*` needs at least one more segment
		{"x.*", R, "y.*", R, false},
		{"a.*.c", I, "*.b.*", I, true},
		{"a.*.c", I, "*.b.d", I, false},
	}
	for _, tc := range tests {
		if got := PatternsOverlap(tc.p, tc.pm, tc.q, tc.qm); got != tc.want {
			t.Errorf("PatternsOverlap(%q, %d, %q, %d) = %v, want %v", tc.p, tc.pm, tc.q, tc.qm, got, tc.want)
		}
		if got := PatternsOverlap(tc.q, tc.qm, tc.p, tc.pm); got != tc.want {
			t.Errorf("PatternsOverlap(%q, %d, %q, %d) = %v, want %v (swapped)", tc.q, tc.qm, tc.p, tc.pm, got, tc.want)
		}
	}
}

// overlapAlphabet is what fuzzed patterns are made of: two literal segments
// and the wildcard. A witness topic needs at most one segment neither
// pattern names ("c"), and no more segments than the longer pattern has
// plus one, so the brute force below is exact.
var overlapAlphabet = []string{"a", "b", "*"}

func fuzzPattern(b []byte) string {
	if len(b) == 0 {
		return "a"
	}
	segs := make([]string, 0, len(b))
	for _, c := range b {
		segs = append(segs, overlapAlphabet[int(c)%len(overlapAlphabet)])
	}
	return strings.Join(segs, ".")
}

func matcherMatches(m Matcher, pattern, topic string) bool {
	if m == RouteMatcher {
		return MatchRoute(pattern, topic)
	}
	return MatchInterceptor(pattern, topic)
}

// someTopicMatchesBoth tries every topic over {a, b, c} of 1..maxDepth
// segments.
func someTopicMatchesBoth(p string, pm Matcher, q string, qm Matcher, maxDepth int) bool {
	var try func(prefix []string) bool
	try = func(prefix []string) bool {
		if len(prefix) > 0 {
			topic := strings.Join(prefix, ".")
			if matcherMatches(pm, p, topic) && matcherMatches(qm, q, topic) {
				return true
			}
		}
		if len(prefix) == maxDepth {
			return false
		}
		for _, s := range []string{"a", "b", "c"} {
			if try(append(prefix, s)) {
				return true
			}
		}
		return false
	}
	return try(nil)
}

// FuzzPatternsOverlap: PatternsOverlap agrees with a brute-force search for
// a topic both patterns match.
func FuzzPatternsOverlap(f *testing.F) {
	f.Add([]byte{0, 2}, false, []byte{0, 1, 2}, true)
	f.Add([]byte{2}, true, []byte{0, 1}, false)
	f.Add([]byte{0, 2, 1}, false, []byte{2, 1, 2}, true)
	f.Fuzz(func(t *testing.T, pb []byte, pRoute bool, qb []byte, qRoute bool) {
		if len(pb) > 5 || len(qb) > 5 {
			return
		}
		p, q := fuzzPattern(pb), fuzzPattern(qb)
		pm, qm := InterceptorMatcher, InterceptorMatcher
		if pRoute {
			pm = RouteMatcher
		}
		if qRoute {
			qm = RouteMatcher
		}
		want := someTopicMatchesBoth(p, pm, q, qm, max(len(pb), len(qb), 1)+1)
		if got := PatternsOverlap(p, pm, q, qm); got != want {
			t.Fatalf("PatternsOverlap(%q, %d, %q, %d) = %v, brute force says %v", p, pm, q, qm, got, want)
		}
	})
}
