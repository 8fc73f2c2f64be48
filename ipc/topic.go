package ipc

import (
	"errors"
	"fmt"
	"strings"
)

// Topic limits (DESIGN §4b). What a capsule publishes or subscribes is held to
// MaxTopicBytes and MaxTopicSegments; the matchers refuse anything deeper than
// MaxMatchSegments so that a hostile topic costs bounded work.
const (
	MaxTopicBytes    = 256
	MaxTopicSegments = 8
	MaxMatchSegments = 20
)

// ErrInvalidTopic is wrapped by every topic and pattern validation error.
var ErrInvalidTopic = errors.New("invalid topic")

// ValidateTopic checks a concrete topic, one an event is published on: no
// wildcard segment is allowed.
func ValidateTopic(topic string) error {
	return validate(topic, false)
}

// ValidatePattern checks a subscription, interceptor or ACL pattern: like a
// topic, but `*` may stand as a whole segment anywhere (a trailing `.*`
// additionally means "one or more segments" to MatchRoute).
func ValidatePattern(pattern string) error {
	return validate(pattern, true)
}

func validate(s string, wildcards bool) error {
	kind := "topic"
	if wildcards {
		kind = "pattern"
	}
	if s == "" {
		return fmt.Errorf("%w: empty %s", ErrInvalidTopic, kind)
	}
	if len(s) > MaxTopicBytes {
		return fmt.Errorf("%w: %s %.40q… is %d bytes, the limit is %d", ErrInvalidTopic, kind, s, len(s), MaxTopicBytes)
	}
	if strings.HasPrefix(s, "$") || strings.HasPrefix(s, "_INBOX") {
		return fmt.Errorf("%w: %s %q: the $ and _INBOX prefixes are reserved", ErrInvalidTopic, kind, s)
	}
	segments := 0
	for i := 0; i <= len(s); {
		seg, next := segment(s, i)
		segments++
		switch {
		case seg == "":
			return fmt.Errorf("%w: %s %q has an empty segment (leading, trailing or doubled dot)", ErrInvalidTopic, kind, s)
		case seg == "*":
			if !wildcards {
				return fmt.Errorf("%w: topic %q: `*` is allowed only in patterns", ErrInvalidTopic, s)
			}
		case seg == ">":
			return fmt.Errorf("%w: %s %q: `>` is not a segment", ErrInvalidTopic, kind, s)
		default:
			for j := 0; j < len(seg); j++ {
				if !segmentByte(seg[j]) {
					return fmt.Errorf("%w: %s %q: segment %q has %q; segments use ASCII letters, digits, '-', '_' and ':'", ErrInvalidTopic, kind, s, seg, seg[j])
				}
			}
		}
		i = next
	}
	if segments > MaxTopicSegments {
		return fmt.Errorf("%w: %s %q has %d segments, the limit is %d", ErrInvalidTopic, kind, s, segments, MaxTopicSegments)
	}
	return nil
}

func segmentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == ':'
}

// segment returns the segment of s starting at i and the index just past its
// terminating dot (len(s)+1 after the last segment).
func segment(s string, i int) (string, int) {
	j := strings.IndexByte(s[i:], '.')
	if j < 0 {
		return s[i:], len(s) + 1
	}
	return s[i : i+j], i + j + 1
}

// MatchInterceptor reports whether an interceptor pattern matches a topic: the
// same number of segments, `*` in the pattern matching exactly one segment.
// A `*` in the topic is a literal. Empty segments never match.
func MatchInterceptor(pattern, topic string) bool {
	if pattern == "" || topic == "" {
		return false
	}
	return matchSegments(pattern, topic, false)
}

// MatchRoute reports whether a subscription or ACL pattern matches a topic:
// MatchInterceptor's rule, plus a trailing `.*` that matches one or more
// further segments. Topics deeper than MaxMatchSegments never match.
func MatchRoute(pattern, topic string) bool {
	if pattern == "" || topic == "" {
		return false
	}
	return matchSegments(pattern, topic, true)
}

func matchSegments(pattern, topic string, subtree bool) bool {
	pi, ti := 0, 0
	depth := 0
	for {
		if pi > len(pattern) {
			// Pattern exhausted: the topic must be exhausted too.
			return ti > len(topic)
		}
		if ti > len(topic) {
			return false
		}
		ps, pnext := segment(pattern, pi)
		ts, tnext := segment(topic, ti)
		depth++
		if depth > MaxMatchSegments || ps == "" || ts == "" {
			return false
		}
		if subtree && ps == "*" && pnext > len(pattern) && pi > 0 {
			// Trailing `.*`: one or more remaining topic segments, each
			// non-empty and within the depth limit.
			for {
				if ts == "" {
					return false
				}
				if tnext > len(topic) {
					return true
				}
				ti = tnext
				ts, tnext = segment(topic, ti)
				depth++
				if depth > MaxMatchSegments {
					return false
				}
			}
		}
		if ps != "*" && ps != ts {
			return false
		}
		pi, ti = pnext, tnext
	}
}
