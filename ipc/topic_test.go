package ipc

import (
	"strings"
	"testing"
)

func TestMatchRouteSeedCases(t *testing.T) {
	cases := []struct {
		pattern, topic string
		route, icpt    bool
	}{
		{"tool.v1.execute.*.result", "tool.v1.execute.write_file.result", true, true},
		{"tool.v1.execute.*.result", "tool.v1.execute.result", false, false},
		{"tool.v1.execute.*.result", "tool.v1.execute.foo.bar.result", false, false},
		{"astrid.v1.request.*", "astrid.v1.request.x", true, true},
		{"astrid.v1.request.*", "astrid.v1.request.x.y", true, false},
		{"astrid.v1.request.*", "astrid.v1.request", false, false},
		{"astrid.*.input", "astrid.cli.input", true, true},
		{"astrid.*.input", "astrid.cli.sub.input", false, false},
		{"a.b.c", "a.b", false, false},
		{"a.b", "a", false, false},
		{"a", "a.b", false, false},
		{"*", "a", true, true},
		{"*", "a.b", false, false},
		{"foo.bar", "foo.*", false, false},
		{"foo.*", "foo.*", true, true},
		{"a..b", "a..b", false, false},
		{"a.b", "a.b.", false, false},
		{"a.*", "a.b..c", false, false},
		{"", "", false, false},
	}
	for _, c := range cases {
		if got := MatchRoute(c.pattern, c.topic); got != c.route {
			t.Errorf("MatchRoute(%q, %q) = %v, want %v", c.pattern, c.topic, got, c.route)
		}
		if got := MatchInterceptor(c.pattern, c.topic); got != c.icpt {
			t.Errorf("MatchInterceptor(%q, %q) = %v, want %v", c.pattern, c.topic, got, c.icpt)
		}
	}
}

func TestMatchDepthLimit(t *testing.T) {
	deep20 := strings.Repeat("a.", 19) + "a"
	deep21 := deep20 + ".a"
	if !MatchRoute("a.*", deep20) {
		t.Error("20 segments should match a.*")
	}
	if MatchRoute("a.*", deep21) {
		t.Error("21 segments must never match")
	}
	if MatchRoute(deep21, deep21) {
		t.Error("21-segment exact pattern must not match")
	}
}

func TestValidate(t *testing.T) {
	good := []string{"a", "tool.v1.execute.read_file", "mcp.srv:tool", "A-b_c:d"}
	for _, s := range good {
		if err := ValidateTopic(s); err != nil {
			t.Errorf("ValidateTopic(%q) = %v", s, err)
		}
		if err := ValidatePattern(s); err != nil {
			t.Errorf("ValidatePattern(%q) = %v", s, err)
		}
	}
	badTopic := []string{"", "a..b", ".a", "a.", "a.*", "*", "a.>", "$SYS.x", "_INBOX.x", "a b", "a/b", "é", strings.Repeat("a", 257), "a.b.c.d.e.f.g.h.i"}
	for _, s := range badTopic {
		if err := ValidateTopic(s); err == nil {
			t.Errorf("ValidateTopic(%q) accepted", s)
		}
	}
	if err := ValidatePattern("tool.v1.*.result"); err != nil {
		t.Error(err)
	}
	for _, s := range []string{"a.**", "a.b*", "a..*", ">"} {
		if err := ValidatePattern(s); err == nil {
			t.Errorf("ValidatePattern(%q) accepted", s)
		}
	}
}

func FuzzMatchers(f *testing.F) {
	f.Add("tool.v1.execute.*.result", "tool.v1.execute.x.result")
	f.Add("a.*", "a.b.c")
	f.Fuzz(func(t *testing.T, pattern, topic string) {
		r := MatchRoute(pattern, topic)
		i := MatchInterceptor(pattern, topic)
		if i && !r {
			t.Fatalf("interceptor match %q %q without route match", pattern, topic)
		}
		if ValidateTopic(topic) == nil && pattern == topic && !i {
			t.Fatalf("valid topic %q does not match itself", topic)
		}
	})
}

func FuzzValidate(f *testing.F) {
	f.Add("a.b.*")
	f.Fuzz(func(t *testing.T, s string) {
		if ValidateTopic(s) == nil {
			if ValidatePattern(s) != nil {
				t.Fatalf("topic %q valid but not as pattern", s)
			}
			if strings.Contains(s, "*") || strings.Contains(s, "..") || len(s) > MaxTopicBytes {
				t.Fatalf("accepted %q", s)
			}
		}
	})
}
