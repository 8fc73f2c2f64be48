package dispatch

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/astrid-go/astrid/ipc"
)

// refMatch is an independent statement of the ACL rule (DESIGN §4b): equal
// depth with `*` standing for one segment, or a trailing `.*` standing for
// one or more; topics deeper than the matcher limit never match.
func refMatch(pattern, topic string) bool {
	p, t := strings.Split(pattern, "."), strings.Split(topic, ".")
	if len(t) > ipc.MaxMatchSegments {
		return false
	}
	if len(p) >= 2 && p[len(p)-1] == "*" && len(t) >= len(p) {
		t = t[:len(p)-1]
		p = p[:len(p)-1]
	}
	if len(p) != len(t) {
		return false
	}
	for i := range p {
		if p[i] != "*" && p[i] != t[i] {
			return false
		}
	}
	return true
}

// FuzzACL: no publish is accepted whose topic matches none of the
// capsule's [publish] patterns, and none is refused by the ACL that matches
// one.
func FuzzACL(f *testing.F) {
	seeds := [][3]string{
		{"tool.v1.execute.*", "tool.v1.execute.result", "tool.v1.execute.x.y"},
		{"a.b", "", "a.*"},
		{"a.*.c", "x", "a.b.c"},
		{"a.*", "b.*", "a"},
		{"*", "", "x"},
		{"$SYS.*", "_INBOX.x", "$SYS.x"},
		{"a.b", "c.>", "c.d"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2])
	}
	d, _ := newTestDispatcher(f, Options{RateBurst: maxRateBurst, RateBytesPerSec: maxRateBurst})
	n := 0
	f.Fuzz(func(t *testing.T, p1, p2, topic string) {
		var patterns []string
		for _, p := range []string{p1, p2} {
			if p != "" && ipc.ValidatePattern(p) == nil {
				patterns = append(patterns, p)
			}
		}
		n++
		id := fmt.Sprintf("c%d", n)
		if err := d.Register(CapsuleACL{ID: id, Publish: patterns}, continueTarget); err != nil {
			t.Fatalf("Register(%q): %v", patterns, err)
		}
		defer d.Unregister(id)
		_, err := d.Publish(Caller{Capsule: id, Principal: "default"}, topic, json.RawMessage(`{}`))
		want := false
		for _, p := range patterns {
			want = want || refMatch(p, topic)
		}
		switch {
		case err == nil:
			if ipc.ValidateTopic(topic) != nil {
				t.Fatalf("invalid topic %q accepted", topic)
			}
			if !want {
				t.Fatalf("topic %q accepted, but it matches none of %q", topic, patterns)
			}
		case errors.Is(err, ErrDenied):
			if want {
				t.Fatalf("topic %q denied, but it matches one of %q: %v", topic, patterns, err)
			}
		case errors.Is(err, ipc.ErrInvalidTopic):
			if ipc.ValidateTopic(topic) == nil {
				t.Fatalf("valid topic %q refused as invalid: %v", topic, err)
			}
		default:
			t.Fatalf("Publish(%q) under %q: unexpected error %v", topic, patterns, err)
		}
	})
}
