package manifest

import "github.com/astrid-go/astrid/ipc"

// elicitAnswers is the family of topics the person's answers to the host
// elicit call travel on (a secret among them): astrid.v1.elicit.response.<id>.
var elicitAnswers = ipc.ElicitResponseTopic("*")

// ReadsElicitAnswers reports whether subscribe pattern p, read as the
// dispatcher reads the subscribe ACL (a route: a trailing `.*` takes one or
// more segments), or as an interceptor, could receive an answer to an
// elicit question: another capsule's secret.
func ReadsElicitAnswers(p string) bool {
	return ipc.ValidatePattern(p) == nil &&
		(ipc.PatternsOverlap(p, ipc.RouteMatcher, elicitAnswers, ipc.InterceptorMatcher) ||
			ipc.PatternsOverlap(p, ipc.InterceptorMatcher, elicitAnswers, ipc.InterceptorMatcher))
}

// checkElicitAnswers refuses, at its key, every [subscribe] pattern that
// could receive the answers to elicit questions: they are the host's, and
// one may be a secret typed for another capsule. No grant opens them.
func (c *checker) checkElicitAnswers(top *table, m *Manifest) {
	for _, p := range m.SubscribePatterns() {
		if !ReadsElicitAnswers(p) {
			continue
		}
		at, path := pos{1, 1}, "subscribe"
		if t := top.sub("subscribe"); t != nil {
			path = t.keyPath(p)
			if kv := t.get(p); kv != nil {
				at = kv.keyAt
			}
		}
		c.errorf(at, path, "[subscribe] %q would let the capsule read %s, the person's answers to the host's elicit questions (secrets among them), which only the host reads", p, elicitAnswers)
	}
}
