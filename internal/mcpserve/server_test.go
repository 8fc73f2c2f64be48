package mcpserve

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMCPNameMapsBusNamesOneToOne(t *testing.T) {
	for bus, want := range map[string]string{"read_file": "read_file", "files:write_file": "files.write_file", "a:b:c": "a.b.c"} {
		if got := MCPName(bus); got != want {
			t.Errorf("MCPName(%q) = %q, want %q", bus, got, want)
		}
	}
}

func TestArgumentsMustBeASmallObject(t *testing.T) {
	for _, c := range []struct {
		in, want, err string
	}{
		{"", "{}", ""},
		{"null", "{}", ""},
		{` {"a":1} `, `{"a":1}`, ""},
		{"[1]", "", "must be a JSON object"},
		{`"s"`, "", "must be a JSON object"},
		{`{"a":`, "", "not valid JSON"},
		{`{"a":"` + strings.Repeat("x", MaxArguments) + `"}`, "", "the largest a call may carry"},
	} {
		got, err := arguments(json.RawMessage(c.in))
		switch {
		case c.err == "" && (err != nil || string(got) != c.want):
			t.Errorf("arguments(%.20q) = %s, %v; want %s", c.in, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("arguments(%.20q): %v; want an error saying %q", c.in, err, c.err)
		}
	}
}

func TestTokensAreFreshAndLong(t *testing.T) {
	if a, b := NewToken(), NewToken(); a == b || len(a) < 40 {
		t.Fatalf("tokens %q %q: want distinct, 256 bits", a, b)
	}
}
