package ipc

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// The conformance suite's forms (SEP-1034 defaults, SEP-1330 enums).
const (
	sep1034Form = `{"type":"object","properties":{
		"name":{"type":"string","description":"User name","default":"John Doe"},
		"age":{"type":"integer","default":30},
		"score":{"type":"number","default":95.5},
		"status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},
		"verified":{"type":"boolean","default":true}}}`
	sep1330Form = `{"type":"object","properties":{
		"untitledSingle":{"type":"string","enum":["option1","option2","option3"]},
		"titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"}]},
		"legacyEnum":{"type":"string","enum":["opt1","opt2"],"enumNames":["Option One","Option Two"]},
		"untitledMulti":{"type":"array","items":{"type":"string","enum":["option1","option2"]}},
		"titledMulti":{"type":"array","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"}]}}},
		"required":["untitledSingle"]}`
)

// TestElicitSchemaKeepsTheForms: the forms MCP defines parse, and encode
// again with every keyword a client reads (defaults, enum, oneOf,
// enumNames, items.enum, items.anyOf).
func TestElicitSchemaKeepsTheForms(t *testing.T) {
	for _, c := range []struct {
		form string
		want []string
	}{
		{sep1034Form, []string{`"name":{"type":"string","description":"User name","default":"John Doe"}`, `"age":{"type":"integer","default":30}`,
			`"score":{"type":"number","default":95.5}`, `"status":{"type":"string","enum":["active","inactive","pending"],"default":"active"}`, `"verified":{"type":"boolean","default":true}`}},
		{sep1330Form, []string{`"oneOf":[{"const":"value1","title":"First Option"}`, `"enumNames":["Option One","Option Two"]`,
			`"items":{"type":"string","enum":["option1","option2"]}`, `"items":{"anyOf":[{"const":"value1","title":"First Choice"}`, `"required":["untitledSingle"]`}},
	} {
		s, err := ParseElicitSchema([]byte(c.form))
		if err != nil {
			t.Fatalf("%v", err)
		}
		b, _ := json.Marshal(s)
		for _, w := range c.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s\ndoes not hold %s", b, w)
			}
		}
	}
}

// TestParseElicitSchemaRefuses: bad and hostile forms, each refused
// saying why.
func TestParseElicitSchemaRefuses(t *testing.T) {
	var huge strings.Builder
	huge.WriteString(`{"type":"object","properties":{`)
	for i := range 10000 {
		if i > 0 {
			huge.WriteByte(',')
		}
		fmt.Fprintf(&huge, `"f%d":{"type":"string"}`, i)
	}
	huge.WriteString(`}}`)
	var many strings.Builder
	many.WriteString(`{"type":"object","properties":{`)
	for i := range MaxElicitFormFields + 1 {
		if i > 0 {
			many.WriteByte(',')
		}
		fmt.Fprintf(&many, `"f%d":{"type":"string"}`, i)
	}
	many.WriteString(`}}`)
	field := func(p string) string { return `{"type":"object","properties":{"f":` + p + `}}` }
	for _, c := range []struct{ name, form, want string }{
		{"10,000 fields", huge.String(), "bytes; at most"},
		{"33 fields", many.String(), "1 to 32 fields, not 33"},
		{"no fields", `{"type":"object","properties":{}}`, "not 0"},
		{"not an object", `[1]`, "not a JSON object"},
		{"type array", `{"type":"array","properties":{"f":{"type":"string"}}}`, "not object"},
		{"nested object", field(`{"type":"object"}`), `type "object"`},
		{"enum and oneOf", field(`{"type":"string","enum":["a"],"oneOf":[{"const":"b","title":"B"}]}`), "not both"},
		{"enumNames mismatch", field(`{"type":"string","enum":["a","b"],"enumNames":["A"]}`), "1 names for 2 options"},
		{"option twice", field(`{"type":"string","enum":["a","a"]}`), "listed twice"},
		{"empty option", field(`{"type":"string","enum":[""]}`), "empty"},
		{"control in an option", field(`{"type":"string","enum":["a\u001b[2J"]}`), "control"},
		{"options on a number", field(`{"type":"number","enum":["1"]}`), "no options"},
		{"multi-select without items", field(`{"type":"array"}`), "items.enum or items.anyOf"},
		{"string default on an integer", field(`{"type":"integer","default":"30"}`), "the default: not a number"},
		{"fraction default on an integer", field(`{"type":"integer","default":1.5}`), "not an integer"},
		{"default not an option", field(`{"type":"string","enum":["a"],"default":"b"}`), "not one of the options"},
		{"long title", field(`{"type":"string","title":"` + strings.Repeat("t", 2000) + `"}`), "the title"},
		{"required unknown", `{"type":"object","properties":{"f":{"type":"string"}},"required":["g"]}`, "not a field"},
		{"control in a name", `{"type":"object","properties":{"a\nb":{"type":"string"}}}`, "field's name"},
		{"too large", field(`{"type":"string","description":"` + strings.Repeat("d", MaxElicitFormSchema) + `"}`), "bytes; at most"},
	} {
		_, err := ParseElicitSchema([]byte(c.form))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error saying %q", c.name, err, c.want)
		}
	}
}

// TestCheckContentFitsTheForm: an answer is an object of the form's
// fields, each of its type and options, with every required field.
func TestCheckContentFitsTheForm(t *testing.T) {
	s1034, err := ParseElicitSchema([]byte(sep1034Form))
	if err != nil {
		t.Fatal(err)
	}
	s1330, err := ParseElicitSchema([]byte(sep1330Form))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s       ElicitSchema
		content string
		want    string // "" for fits
	}{
		{s1034, `{"name":"Jane Smith","age":25,"score":88,"status":"inactive","verified":false}`, ""},
		{s1034, `{}`, ""},
		{s1330, `{"untitledSingle":"option1","titledSingle":"value1","legacyEnum":"opt1","untitledMulti":["option1","option2"],"titledMulti":["value1","value2"]}`, ""},
		{s1330, `{"titledSingle":"value1"}`, `required field "untitledSingle"`},
		{s1330, `{"untitledSingle":"option9"}`, "not one of the options"},
		{s1330, `{"untitledSingle":"option1","titledMulti":["value1","value1"]}`, "one twice"},
		{s1034, `{"age":"25"}`, "not a number"},
		{s1034, `{"age":2.5}`, "not an integer"},
		{s1034, `{"verified":"yes"}`, "not a boolean"},
		{s1034, `{"extra":1}`, "not a field"},
		{s1034, `[1]`, "a JSON object"},
		{s1034, `null`, "a JSON object"},
		{s1034, `{"name":"` + strings.Repeat("x", MaxElicitAnswer) + `"}`, "more than"},
	} {
		err := c.s.CheckContent(json.RawMessage(c.content))
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%.80s: %v; want %q", c.content, err, c.want)
		}
	}
}

// TestFormFieldByField: a frontend that asks one field at a time asks
// required fields first, offers each default as text, and its answers
// become the fields' typed values.
func TestFormFieldByField(t *testing.T) {
	s, err := ParseElicitSchema([]byte(sep1034Form))
	if err != nil {
		t.Fatal(err)
	}
	content := map[string]json.RawMessage{}
	for _, name := range s.Names() {
		f := s.Field(name)
		if f.Default == nil {
			t.Fatalf("field %s offers no default", name)
		}
		v, err := s.Value(name, ElicitResponse{Value: f.Default})
		if err != nil {
			t.Fatalf("field %s: default %q: %v", name, *f.Default, err)
		}
		content[name] = v
	}
	b, _ := json.Marshal(content)
	if string(b) != `{"age":30,"name":"John Doe","score":95.5,"status":"active","verified":true}` {
		t.Fatalf("content %s", b)
	}
	if err := s.CheckContent(b); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Value("age", ElicitResponse{Value: new("thirty")}); err == nil {
		t.Fatal("thirty taken for an integer")
	}
	if f := s.Field("status"); f.FieldType.Kind != FieldEnum || len(f.FieldType.Options) != 3 {
		t.Fatalf("status asked as %+v", f.FieldType)
	}
}

// FuzzElicitSchema: whatever a form's schema holds, a schema that parses
// encodes to one that parses the same, and its own defaults fit it.
func FuzzElicitSchema(f *testing.F) {
	f.Add(sep1034Form)
	f.Add(sep1330Form)
	f.Add(`{"type":"object","properties":{"a":{"type":"array","items":{"enum":["x"]},"default":["x"]}}}`)
	f.Fuzz(func(t *testing.T, raw string) {
		s, err := ParseElicitSchema([]byte(raw))
		if err != nil {
			return
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		again, err := ParseElicitSchema(b)
		if err != nil {
			t.Fatalf("%s parsed, its encoding %s does not: %v", raw, b, err)
		}
		b2, _ := json.Marshal(again)
		if string(b) != string(b2) {
			t.Fatalf("encodings differ:\n%s\n%s", b, b2)
		}
		defaults := map[string]json.RawMessage{}
		for name, p := range s.Properties {
			if p.Default != nil {
				defaults[name] = p.Default
			}
		}
		if len(s.Required) == 0 {
			d, _ := json.Marshal(defaults)
			if err := s.CheckContent(d); err != nil && len(d) <= MaxElicitAnswer {
				t.Fatalf("the defaults %s do not fit %s: %v", d, b, err)
			}
		}
	})
}
