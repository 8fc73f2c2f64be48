package approval

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestResourceShowsWhatRuns(t *testing.T) {
	long := strings.Repeat("é", 1000)
	many := map[string]string{}
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		many[k] = strings.Repeat(k, 300)
	}
	manyJSON, _ := json.Marshal(many)
	for _, tc := range []struct {
		name, args string
		check      func(string) bool
	}{
		{"compacted, keys sorted, numbers exact", `{ "z": 12345678901234567890, "a": "<b>&" }`,
			func(s string) bool { return s == `{"a":"<b>&","z":12345678901234567890}` }},
		{"a right-to-left override is escaped", `{"file_path":"evil\u202etxt.sh"}`,
			func(s string) bool {
				return s == `{"file_path":"evil\u202etxt.sh"}` && !strings.ContainsRune(s, '\u202e')
			}},
		{"a zero-width space is escaped", "{\"p\":\"a\u200bb\"}",
			func(s string) bool { return s == `{"p":"a\u200bb"}` }},
		{"a long value is cut and the path still shown", `{"content":"` + long + `","file_path":"x.txt"}`,
			func(s string) bool {
				return strings.Contains(s, `[truncated: 384 of 2000 bytes shown]`) && strings.Contains(s, `"file_path":"x.txt"`) && len(s) <= MaxResourceBytes
			}},
		{"many values are cut as a whole, visibly", string(manyJSON),
			func(s string) bool {
				return strings.HasSuffix(s, "bytes shown]") && strings.Contains(s, "… [truncated: 1024 of ") && len(s) < MaxResourceBytes+64
			}},
		{"not an object", `"just text"`, func(s string) bool { return s == `"just text"` }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := resource(json.RawMessage(tc.args)); !tc.check(got) {
				t.Fatalf("resource(%.80s) = %q", tc.args, got)
			}
		})
	}
}

func TestTimeoutConfig(t *testing.T) {
	for _, tc := range []struct {
		set  bool
		v    string
		want float64
		ok   bool
	}{{false, "", 300, true}, {true, "", 300, true}, {true, "12", 12, true}, {true, " 0.5 ", 0.5, true}, {true, "300.0", 300, true},
		{true, "0", 300, false}, {true, "-3", 300, false}, {true, "NaN", 300, false}, {true, "1e9", 300, false}, {true, "soon", 300, false}} {
		got, ok := parseTimeout(tc.v, tc.set)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%q (set %v): %g %v, want %g %v", tc.v, tc.set, got, ok, tc.want, tc.ok)
		}
	}
}
