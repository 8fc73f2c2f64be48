package natsbus

import (
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/astrid-go/astrid/ipc"
)

// FuzzMapPattern: whatever MapPattern accepts is a valid NATS subject that
// matches, as a filter, exactly the topics ipc.MatchRoute does (checked on
// the pattern's own shape with each * replaced by a literal).
func FuzzMapPattern(f *testing.F) {
	for _, s := range []string{"a", "a.*", "a.*.b", "*", "a.>", "a..b", "$x", "a b", "x:y.*.*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pattern string) {
		mapped, err := MapPattern(pattern)
		if err != nil {
			return
		}
		if !server.IsValidSubject(mapped) {
			t.Fatalf("MapPattern(%q) = %q: not a valid subject", pattern, mapped)
		}
		if ipc.ValidatePattern(pattern) != nil {
			t.Fatalf("MapPattern accepted %q, which ipc refuses", pattern)
		}
		for _, topic := range []string{pattern + ".z", replaceStars(pattern)} {
			if ipc.ValidateTopic(topic) != nil {
				continue
			}
			if got, want := server.SubjectMatchesFilter(topic, mapped), ipc.MatchRoute(pattern, topic); got != want {
				t.Fatalf("pattern %q (subject %q) on topic %q: broker %v, ACL %v", pattern, mapped, topic, got, want)
			}
		}
	})
}

func replaceStars(pattern string) string {
	b := []byte(pattern)
	for i, c := range b {
		if c == '*' {
			b[i] = 'w'
		}
	}
	return string(b)
}

// FuzzParseSubject: ParseSubject never panics, and what it accepts is
// exactly what TopicSubject makes of its result.
func FuzzParseSubject(f *testing.F) {
	for _, s := range []string{"astrid.a.b", "astrid.kernel.b", "astrid.*.b", "astrid.a.b.c.d", "astrid..", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, subject string) {
		id, topic, err := ParseSubject(subject)
		if err != nil {
			return
		}
		again, err := TopicSubject(id, topic)
		if err != nil || again != subject {
			t.Fatalf("ParseSubject(%q) = %q, %q; TopicSubject gives %q, %v", subject, id, topic, again, err)
		}
		if !server.IsValidPublishSubject(subject) {
			t.Fatalf("ParseSubject accepted %q, which NATS would not publish on", subject)
		}
	})
}
