package natsbus

import (
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/astrid-go/astrid/ipc"
)

func TestMapPattern(t *testing.T) {
	for _, tc := range []struct {
		pattern, want string
	}{
		{"llm.v1.request", "llm.v1.request"},
		{"llm.*", "llm.>"},                       // trailing: one or more segments
		{"tool.v1.*.result", "tool.v1.*.result"}, // middle: one segment
		{"a.*.*", "a.*.>"},
		{"*", "*"}, // a lone * is one segment (MatchRoute's rule), not a subtree
		{"*.b", "*.b"},
		{"x:y-z_1.*", "x:y-z_1.>"},
	} {
		got, err := MapPattern(tc.pattern)
		if err != nil || got != tc.want {
			t.Errorf("MapPattern(%q) = %q, %v; want %q", tc.pattern, got, err, tc.want)
		}
		if !server.IsValidSubject(got) {
			t.Errorf("MapPattern(%q) = %q is not a valid NATS subject", tc.pattern, got)
		}
	}
}

func TestMapPatternRefusesWhatNATSCannotCarry(t *testing.T) {
	for _, p := range []string{
		"", "a..b", ".a", "a.", // empty tokens
		"a.>", ">", // NATS's full wildcard is not a topic segment
		"a b", "a\tb", "é.x", // whitespace and non-ASCII
		"a*", "*a.b", "a.b>", // partial wildcards
		"$SYS.x", "_INBOX.x", // reserved prefixes
		"a.b.c.d.e.f.g.h.i", // deeper than a topic may be
	} {
		if got, err := MapPattern(p); !errors.Is(err, ErrUnmappable) {
			t.Errorf("MapPattern(%q) = %q, %v; want ErrUnmappable", p, got, err)
		}
	}
}

func TestTopicSubjectAndParse(t *testing.T) {
	for _, tc := range []struct {
		id, topic, subject string
	}{
		{"react", "llm.v1.request.generate", "astrid.react.llm.v1.request.generate"},
		{"a-b_c", "x", "astrid.a-b_c.x"},
	} {
		got, err := TopicSubject(tc.id, tc.topic)
		if err != nil || got != tc.subject {
			t.Fatalf("TopicSubject(%q, %q) = %q, %v; want %q", tc.id, tc.topic, got, err, tc.subject)
		}
		id, topic, err := ParseSubject(got)
		if err != nil || id != tc.id || topic != tc.topic {
			t.Fatalf("ParseSubject(%q) = %q, %q, %v", got, id, topic, err)
		}
	}
}

func TestTopicSubjectRefuses(t *testing.T) {
	for _, tc := range []struct{ id, topic string }{
		{"kernel", "x"}, // the kernel's events stay on their host
		{"a.b", "x"},    // an id with a dot would reach into another id's subjects
		{"*", "x"},
		{">", "x"},
		{"", "x"},
		{"a", "x.*"}, // a topic has no wildcard
		{"a", "x.>"},
		{"a", ""},
	} {
		if got, err := TopicSubject(tc.id, tc.topic); !errors.Is(err, ErrUnmappable) {
			t.Errorf("TopicSubject(%q, %q) = %q, %v; want ErrUnmappable", tc.id, tc.topic, got, err)
		}
	}
}

func TestParseSubjectRefusesForgeries(t *testing.T) {
	for _, s := range []string{
		"", "astrid", "astrid.", "astrid.a", "astrid.a.", "other.a.x",
		"astrid.kernel.x", // no one may speak as the kernel
		"astrid.*.x", "astrid.>.x", "astrid.a.*", "astrid.a.>",
		"astrid..x", "astrid.a..x", "astrid.a.$SYS",
	} {
		if id, topic, err := ParseSubject(s); !errors.Is(err, ErrUnmappable) {
			t.Errorf("ParseSubject(%q) = %q, %q, %v; want ErrUnmappable", s, id, topic, err)
		}
	}
}

func TestGrants(t *testing.T) {
	pub, err := PublishGrant("react", "llm.v1.request.*")
	if err != nil || pub != "astrid.react.llm.v1.request.>" {
		t.Fatalf("PublishGrant = %q, %v", pub, err)
	}
	sub, err := SubscribeGrant("tool.v1.*.result")
	if err != nil || sub != "astrid.*.tool.v1.*.result" {
		t.Fatalf("SubscribeGrant = %q, %v", sub, err)
	}
	if _, err := PublishGrant("kernel", "x"); !errors.Is(err, ErrUnmappable) {
		t.Fatalf("PublishGrant as the kernel: %v", err)
	}
}

// TestGrantsMatchAsTheACLDoes checks, for a table of keys and topics, that
// the broker's subject match agrees with the ACL's topic match: a grant
// covers exactly the publishes and deliveries dispatch allows.
func TestGrantsMatchAsTheACLDoes(t *testing.T) {
	keys := []string{"a", "a.b", "a.*", "a.*.c", "*", "*.b", "a.b.*", "*.*", "tool.v1.execute.*.result"}
	topics := []string{"a", "b", "a.b", "a.c", "a.b.c", "a.x.c", "a.b.c.d", "x.b", "tool.v1.execute.echo.result", "tool.v1.execute.echo"}
	for _, k := range keys {
		pub, err := PublishGrant("p", k)
		if err != nil {
			t.Fatal(err)
		}
		sub, err := SubscribeGrant(k)
		if err != nil {
			t.Fatal(err)
		}
		for _, topic := range topics {
			subject, err := TopicSubject("p", topic)
			if err != nil {
				t.Fatal(err)
			}
			want := ipc.MatchRoute(k, topic)
			if got := server.SubjectMatchesFilter(subject, pub); got != want {
				t.Errorf("publish grant %q on %q: broker %v, ACL %v", pub, subject, got, want)
			}
			if got := server.SubjectMatchesFilter(subject, sub); got != want {
				t.Errorf("subscribe grant %q on %q: broker %v, ACL %v", sub, subject, got, want)
			}
			other, _ := TopicSubject("q", topic)
			if server.SubjectMatchesFilter(other, pub) {
				t.Errorf("capsule p's grant %q lets it publish as q (%q)", pub, other)
			}
		}
	}
}

// TopicSubject is the subject Forward publishes a capsule's envelope on,
// checked: astrid.<capsule id>.<topic>, for the tests of ParseSubject.
func TopicSubject(capsuleID, topic string) (string, error) {
	if err := checkCapsuleID(capsuleID); err != nil {
		return "", err
	}
	if err := checkTokens(topic, false); err != nil {
		return "", fmt.Errorf("%w: topic %q: %w", ErrUnmappable, topic, err)
	}
	return SubjectPrefix + "." + capsuleID + "." + topic, nil
}
