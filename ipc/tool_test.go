package ipc

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestToolTopicNames pins the tool convention's topics to seed 000.
func TestToolTopicNames(t *testing.T) {
	cases := []struct{ got, want string }{
		{ToolRequestExecuteTopic, "tool.v1.request.execute"},
		{ToolExecuteResultTopic, "tool.v1.execute.result"},
		{ToolRequestCancelTopic, "tool.v1.request.cancel"},
		{ToolRequestDescribeTopic, "tool.v1.request.describe"},
		{ToolResultPattern, "tool.v1.execute.*.result"},
		{ToolDescribeResponsePattern, "tool.v1.response.describe.*"},
		{ToolExecuteTopic("write_file"), "tool.v1.execute.write_file"},
		{ToolResultTopic("write_file"), "tool.v1.execute.write_file.result"},
		{ToolExecuteTopic("github:create_issue"), "tool.v1.execute.github:create_issue"},
		{ToolDescribeResponseTopic("fs"), "tool.v1.response.describe.fs"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// TestToolTopicsMatch: the router's patterns see what they must and nothing
// else, for any valid name.
func TestToolTopicsMatch(t *testing.T) {
	for _, name := range []string{"a", "write_file", "fs:read-file", "result", "x:y:z", strings.Repeat("n", MaxToolNameBytes)} {
		if err := ValidateToolName(name); err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		exec, result := ToolExecuteTopic(name), ToolResultTopic(name)
		for _, topic := range []string{exec, result} {
			if err := ValidateTopic(topic); err != nil {
				t.Errorf("topic for %q: %v", name, err)
			}
		}
		if !MatchInterceptor(ToolResultPattern, result) || !MatchRoute(ToolResultPattern, result) {
			t.Errorf("%q: the result pattern misses %q", name, result)
		}
		if MatchInterceptor(ToolResultPattern, exec) {
			t.Errorf("%q: the result pattern matches the execute topic %q", name, exec)
		}
		if !MatchInterceptor("tool.v1.execute.*", exec) || MatchInterceptor("tool.v1.execute.*", result) {
			t.Errorf("%q: the execute interceptor pattern is wrong", name)
		}
		if got, ok := ToolNameFromResultTopic(result); !ok || got != name {
			t.Errorf("ToolNameFromResultTopic(%q) = %q, %v", result, got, ok)
		}
	}
	if MatchInterceptor(ToolResultPattern, ToolExecuteResultTopic) {
		t.Error("the result pattern matches the consolidated topic: the router would loop")
	}
	if ToolResultTopic("x") == ToolExecuteResultTopic {
		t.Error("a tool's result topic equals the consolidated topic")
	}
	if !MatchRoute(ToolDescribeResponsePattern, ToolDescribeResponseTopic("fs")) {
		t.Error("the describe pattern misses a response topic")
	}
}

func TestToolNameFromResultTopic(t *testing.T) {
	for _, topic := range []string{
		ToolExecuteResultTopic, "tool.v1.execute..result", "tool.v1.execute.foo.bar.result",
		"tool.v1.execute.foo", "tool.v1.exec.foo.result", "tool.v1.execute.*.result", "",
	} {
		if name, ok := ToolNameFromResultTopic(topic); ok {
			t.Errorf("ToolNameFromResultTopic(%q) = %q, true", topic, name)
		}
	}
}

func TestValidateToolName(t *testing.T) {
	cases := []struct {
		name string
		ok   bool
	}{
		{"read_file", true},
		{"fs:read_file", true},
		{"a-b_c:D9", true},
		{":", true},
		{strings.Repeat("a", MaxToolNameBytes), true},
		{strings.Repeat("a", MaxToolNameBytes+1), false},
		{"", false},
		{"foo.bar", false},
		{".", false},
		{"a b", false},
		{"*", false},
		{">", false},
		{"a/b", false},
		{"ü", false},
		{"名前", false},
		{"a\x00", false},
		{"$x", false},
	}
	for _, c := range cases {
		err := ValidateToolName(c.name)
		if (err == nil) != c.ok {
			t.Errorf("ValidateToolName(%q) = %v, want ok=%v", c.name, err, c.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidToolName) {
			t.Errorf("ValidateToolName(%q) error does not wrap ErrInvalidToolName: %v", c.name, err)
		}
	}
	if MaxToolNameBytes != 233 {
		t.Errorf("MaxToolNameBytes = %d, want 233 (256 - len(\"tool.v1.execute.\") - len(\".result\"))", MaxToolNameBytes)
	}
}

func TestSplitToolName(t *testing.T) {
	cases := []struct{ name, server, tool string }{
		{"filesystem:read_file", "filesystem", "read_file"},
		{"read_file", "", "read_file"},
		{"a:b:c", "a", "b:c"},
		{":x", "", "x"},
	}
	for _, c := range cases {
		if s, tool := SplitToolName(c.name); s != c.server || tool != c.tool {
			t.Errorf("SplitToolName(%q) = %q, %q; want %q, %q", c.name, s, tool, c.server, c.tool)
		}
	}
}

func TestLLMToolName(t *testing.T) {
	cases := []struct {
		name, want string // want "" means refused
	}{
		{"read_file", "read_file"},
		{"fs:read_file", "fs__read_file"},
		{"a:b:c", "a__b__c"},
		{"a::b", "a____b"},
		{"a:_b", "a___b"},
		{"read__file", ""}, // would read back as read:file
		{"a_:b", ""},       // spells a___b, which reads back as a:_b
		{"x_", "x_"},       // a single underscore is safe
		{"foo.bar", ""},    // not a tool name
		{"", ""},           // not a tool name
		{strings.Repeat("a", 64), strings.Repeat("a", 64)},
		{strings.Repeat("a", 65), ""},
		{strings.Repeat("a", 63) + ":", ""}, // 64 bytes, 65 once spelled for an LLM
		{strings.Repeat("a", 62) + ":", strings.Repeat("a", 62) + "__"},
	}
	for _, c := range cases {
		got, err := LLMToolName(c.name)
		if c.want == "" {
			if err == nil || !errors.Is(err, ErrInvalidToolName) {
				t.Errorf("LLMToolName(%q) = %q, %v; want ErrInvalidToolName", c.name, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("LLMToolName(%q) = %q, %v; want %q", c.name, got, err, c.want)
			continue
		}
		if back := ToolNameFromLLM(got); back != c.name {
			t.Errorf("ToolNameFromLLM(%q) = %q, want %q", got, back, c.name)
		}
		for i := 0; i < len(got); i++ {
			if ch := got[i]; !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '_' || ch == '-') {
				t.Errorf("LLMToolName(%q) = %q holds %q", c.name, got, ch)
			}
		}
	}
}

func TestParseToolDescribeResponse(t *testing.T) {
	readFile := ToolDescriptor{Name: "read_file", Description: "Read a file", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}
	writeFile := ToolDescriptor{Name: "write_file", Description: "Write a file", InputSchema: json.RawMessage(`{"type":"object","mutable":true}`), Mutable: true}
	cases := []struct {
		name string
		raw  string
		want ToolDescribeResponse
	}{
		{"canonical", `{"tools":[{"name":"read_file","description":"Read a file","input_schema":{"type":"object","properties":{"path":{"type":"string"}}},"mutable":false}],"description":"files"}`,
			ToolDescribeResponse{Tools: []ToolDescriptor{readFile}, Description: "files"}},
		{"upstream mutable in schema", `{"tools":[{"name":"write_file","description":"Write a file","input_schema":{"type":"object","mutable":true}}]}`,
			ToolDescribeResponse{Tools: []ToolDescriptor{writeFile}}},
		{"descriptor flag wins", `{"tools":[{"name":"w","description":"","input_schema":{"mutable":true},"mutable":false}]}`,
			ToolDescribeResponse{Tools: []ToolDescriptor{{Name: "w", InputSchema: json.RawMessage(`{"mutable":true}`)}}}},
		{"data wrapped", `{"data":{"tools":[]}}`, ToolDescribeResponse{Tools: []ToolDescriptor{}}},
		{"tagged custom", `{"type":"custom","data":{"tools":[{"name":"n","description":"d","input_schema":null}]}}`,
			ToolDescribeResponse{Tools: []ToolDescriptor{{Name: "n", Description: "d"}}}},
		{"nameless entry kept", `{"tools":[{"description":"d"}]}`, ToolDescribeResponse{Tools: []ToolDescriptor{{Description: "d"}}}},
	}
	for _, c := range cases {
		got, err := ParseToolDescribeResponse(json.RawMessage(c.raw))
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %#v, %v; want %#v", c.name, got, err, c.want)
		}
	}
	for _, bad := range []string{`{}`, `{"data":{}}`, `{"tools":null}`} {
		if _, err := ParseToolDescribeResponse(json.RawMessage(bad)); !errors.Is(err, ErrNoTools) {
			t.Errorf("%s: error %v, want ErrNoTools", bad, err)
		}
	}
	for _, bad := range []string{`[]`, `{"tools":[1]}`, `{"tools":{}}`} {
		if _, err := ParseToolDescribeResponse(json.RawMessage(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestToolDescribeResponseEncode(t *testing.T) {
	cases := []struct {
		v    any
		want string
	}{
		{ToolDescribeResponse{}, `{"tools":[]}`},
		{ToolDescriptor{Name: "now"}, `{"name":"now","description":"","input_schema":{"type":"object","properties":{}},"mutable":false}`},
		{ToolDescribeResponse{Tools: []ToolDescriptor{{Name: "rm", Description: "Delete", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`), Mutable: true}}, Description: "fs"},
			`{"tools":[{"name":"rm","description":"Delete","input_schema":{"type":"object","properties":{"path":{"type":"string"}}},"mutable":true}],"description":"fs"}`},
	}
	for _, c := range cases {
		got, err := json.Marshal(c.v)
		if err != nil || string(got) != c.want {
			t.Errorf("%#v encodes as %s, %v; want %s", c.v, got, err, c.want)
		}
	}
}
