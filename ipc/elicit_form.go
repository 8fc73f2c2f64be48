package ipc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"unicode"
	"unicode/utf8"
)

// A form question (MCP's form elicitation, SEP-1034 defaults and SEP-1330
// enums): several typed fields asked at once, described as MCP's
// requested schema, a flat object of primitive properties. ParseElicitSchema
// takes only that shape, bounded; what it returns re-encodes with only the
// keywords it knows, so that what a frontend shows is what was checked.

// Bounds of a form question.
const (
	MaxElicitFormFields  = 32
	MaxElicitFormSchema  = 64 << 10 // the schema's JSON, in bytes
	maxElicitFormOptions = 256
	maxElicitFormText    = 1024 // a title, description or option, in bytes
	maxElicitFieldName   = 64
)

// ElicitSchema is a form's fields, as MCP writes a requested schema.
type ElicitSchema struct {
	Type       string                    `json:"type"`
	Properties map[string]ElicitProperty `json:"properties"`
	Required   []string                  `json:"required,omitempty"`
}

// ElicitProperty is one field: a string (optionally a single-select, as
// enum, oneOf of titled options, or enum with legacy enumNames), a number,
// an integer, a boolean, or an array of options (a multi-select, items as
// enum or anyOf of titled options).
type ElicitProperty struct {
	Type        string         `json:"type"`
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description,omitempty"`
	Enum        []string       `json:"enum,omitempty"`
	EnumNames   []string       `json:"enumNames,omitempty"`
	OneOf       []ElicitOption `json:"oneOf,omitempty"`
	Items       *ElicitItems   `json:"items,omitempty"`
	Format      string         `json:"format,omitempty"`
	MinLength   *int           `json:"minLength,omitempty"`
	MaxLength   *int           `json:"maxLength,omitempty"`
	Minimum     *float64       `json:"minimum,omitempty"`
	Maximum     *float64       `json:"maximum,omitempty"`
	MinItems    *int           `json:"minItems,omitempty"`
	MaxItems    *int           `json:"maxItems,omitempty"`
	// Default is offered to the person (SEP-1034): of the field's type,
	// one of its options when it has some.
	Default json.RawMessage `json:"default,omitempty"`
}

// ElicitOption is a titled option: the value given, and what is shown.
type ElicitOption struct {
	Const string `json:"const"`
	Title string `json:"title"`
}

// ElicitItems are a multi-select's options.
type ElicitItems struct {
	Type  string         `json:"type,omitempty"`
	Enum  []string       `json:"enum,omitempty"`
	AnyOf []ElicitOption `json:"anyOf,omitempty"`
}

// ParseElicitSchema reads a form's schema: an object whose properties are
// 1 to MaxElicitFormFields fields of the kinds ElicitProperty lists, each
// with at most 256 options, texts of at most 1 KiB, a default that fits,
// required naming fields; at most MaxElicitFormSchema bytes in all.
func ParseElicitSchema(raw []byte) (ElicitSchema, error) {
	var s ElicitSchema
	if len(raw) > MaxElicitFormSchema {
		return s, fmt.Errorf("the form's schema is %d bytes; at most %d are allowed", len(raw), MaxElicitFormSchema)
	}
	// Counted before decoding into a map, so that 10,000 fields are
	// refused for their number, not their size alone.
	var probe struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return s, fmt.Errorf("the form's schema is not a JSON object of properties: %w", err)
	}
	if n := len(probe.Properties); n == 0 || n > MaxElicitFormFields {
		return s, fmt.Errorf("a form has 1 to %d fields, not %d", MaxElicitFormFields, n)
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, fmt.Errorf("the form's schema: %w", err)
	}
	if s.Type != "object" {
		return s, fmt.Errorf("the form's schema is of type %.20q, not object", s.Type)
	}
	for name, p := range s.Properties {
		if err := checkFieldName(name); err != nil {
			return s, err
		}
		if err := p.check(); err != nil {
			return s, fmt.Errorf("field %q: %w", name, err)
		}
	}
	for i, r := range s.Required {
		if _, ok := s.Properties[r]; !ok || slices.Contains(s.Required[:i], r) {
			return s, fmt.Errorf("required names %.70q, which is not a field (or is named twice)", r)
		}
	}
	return s, nil
}

func checkFieldName(name string) error {
	if name == "" || len(name) > maxElicitFieldName || !utf8.ValidString(name) || containsControl(name) {
		return fmt.Errorf("a field's name is 1 to %d bytes of text without control characters, not %.70q", maxElicitFieldName, name)
	}
	return nil
}

func containsControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return true
		}
	}
	return false
}

func checkText(what, s string) error {
	if len(s) > maxElicitFormText || !utf8.ValidString(s) {
		return fmt.Errorf("the %s is not at most %d bytes of UTF-8", what, maxElicitFormText)
	}
	return nil
}

func checkOptions(values []string, titled []ElicitOption) error {
	if len(values) > maxElicitFormOptions || len(titled) > maxElicitFormOptions {
		return fmt.Errorf("at most %d options are allowed", maxElicitFormOptions)
	}
	for _, o := range titled {
		if err := checkText("option's title", o.Title); err != nil {
			return err
		}
		values = append(values, o.Const)
	}
	for i, v := range values {
		if v == "" || containsControl(v) {
			return fmt.Errorf("option %d is empty or holds control characters", i)
		}
		if err := checkText("option", v); err != nil {
			return err
		}
		if slices.Contains(values[:i], v) {
			return fmt.Errorf("option %.70q is listed twice", v)
		}
	}
	return nil
}

func (p ElicitProperty) check() error {
	for what, s := range map[string]string{"title": p.Title, "description": p.Description, "format": p.Format} {
		if err := checkText(what, s); err != nil {
			return err
		}
	}
	choice := len(p.Enum) > 0 || len(p.OneOf) > 0
	switch p.Type {
	case "string":
		if len(p.Enum) > 0 && len(p.OneOf) > 0 {
			return errors.New("a select lists its options as enum or as oneOf, not both")
		}
		if len(p.EnumNames) > 0 && len(p.EnumNames) != len(p.Enum) {
			return fmt.Errorf("enumNames has %d names for %d options", len(p.EnumNames), len(p.Enum))
		}
		for _, n := range p.EnumNames {
			if err := checkText("option's name", n); err != nil {
				return err
			}
		}
		if err := checkOptions(slices.Clone(p.Enum), p.OneOf); err != nil {
			return err
		}
	case "number", "integer", "boolean":
		if choice || len(p.EnumNames) > 0 {
			return fmt.Errorf("a %s has no options", p.Type)
		}
	case "array":
		if p.Items == nil || (len(p.Items.Enum) == 0) == (len(p.Items.AnyOf) == 0) {
			return errors.New("a multi-select lists its options as items.enum or items.anyOf")
		}
		if choice || len(p.EnumNames) > 0 {
			return errors.New("a multi-select's options are its items'")
		}
		if err := checkOptions(slices.Clone(p.Items.Enum), p.Items.AnyOf); err != nil {
			return err
		}
	default:
		return fmt.Errorf("type %.20q: a field is a string, number, integer, boolean or array", p.Type)
	}
	if p.Type != "array" && p.Items != nil {
		return errors.New("only a multi-select has items")
	}
	if p.Default != nil {
		if err := p.checkValue(p.Default); err != nil {
			return fmt.Errorf("the default: %w", err)
		}
	}
	return nil
}

// Options are the values a select or multi-select takes; nil for any
// other field.
func (p ElicitProperty) Options() []string {
	var out []string
	if p.Type == "array" && p.Items != nil {
		out = slices.Clone(p.Items.Enum)
		for _, o := range p.Items.AnyOf {
			out = append(out, o.Const)
		}
		return out
	}
	out = slices.Clone(p.Enum)
	for _, o := range p.OneOf {
		out = append(out, o.Const)
	}
	return out
}

// checkValue reports why v is not a value of p.
func (p ElicitProperty) checkValue(v json.RawMessage) error {
	switch p.Type {
	case "string":
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return errors.New("not a string")
		}
		if opts := p.Options(); len(opts) > 0 && !slices.Contains(opts, s) {
			return errors.New("not one of the options")
		}
		if n := utf8.RuneCountInString(s); (p.MinLength != nil && n < *p.MinLength) || (p.MaxLength != nil && n > *p.MaxLength) {
			return errors.New("its length is out of bounds")
		}
	case "number", "integer":
		var f float64
		if err := json.Unmarshal(v, &f); err != nil {
			return errors.New("not a number")
		}
		if p.Type == "integer" && f != math.Trunc(f) {
			return errors.New("not an integer")
		}
		if (p.Minimum != nil && f < *p.Minimum) || (p.Maximum != nil && f > *p.Maximum) {
			return errors.New("out of bounds")
		}
	case "boolean":
		var b bool
		if err := json.Unmarshal(v, &b); err != nil {
			return errors.New("not a boolean")
		}
	case "array":
		var vs []string
		if err := json.Unmarshal(v, &vs); err != nil {
			return errors.New("not a list of strings")
		}
		opts := p.Options()
		for i, s := range vs {
			if !slices.Contains(opts, s) || slices.Contains(vs[:i], s) {
				return errors.New("holds a value that is not one of the options, or one twice")
			}
		}
		if (p.MinItems != nil && len(vs) < *p.MinItems) || (p.MaxItems != nil && len(vs) > *p.MaxItems) {
			return errors.New("its number of values is out of bounds")
		}
	}
	return nil
}

// CheckContent reports why content cannot answer the form: it must be a
// JSON object of at most MaxElicitAnswer bytes whose members are fields of
// the form, each a value of that field, every required field present. The
// error never quotes a value.
func (s ElicitSchema) CheckContent(content json.RawMessage) error {
	if len(content) > MaxElicitAnswer {
		return fmt.Errorf("the answer holds %d bytes, more than %d", len(content), MaxElicitAnswer)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(content, &members); err != nil || members == nil {
		return errors.New("a form is answered with a JSON object")
	}
	for name, v := range members {
		p, ok := s.Properties[name]
		if !ok {
			return fmt.Errorf("%.70q is not a field of the form", name)
		}
		if err := p.checkValue(v); err != nil {
			return fmt.Errorf("field %q: %w", name, err)
		}
	}
	for _, r := range s.Required {
		if _, ok := members[r]; !ok {
			return fmt.Errorf("required field %q is missing", r)
		}
	}
	return nil
}

// Names are the form's fields, required ones first, each group sorted:
// the order a frontend asking one field at a time asks them in.
func (s ElicitSchema) Names() []string {
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		ri, rj := slices.Contains(s.Required, names[i]), slices.Contains(s.Required, names[j])
		if ri != rj {
			return ri
		}
		return names[i] < names[j]
	})
	return names
}

// Field is form field name as one field of the single-value question,
// for a frontend that asks one field at a time: a select or boolean as a
// select, a multi-select as an array, anything else as text, the default
// as its text.
func (s ElicitSchema) Field(name string) OnboardingField {
	p := s.Properties[name]
	f := OnboardingField{Key: name, Prompt: cmpOr(p.Title, name), FieldType: FieldType{Kind: FieldText}}
	if p.Description != "" {
		d := p.Description
		f.Description = &d
	}
	switch {
	case p.Type == "boolean":
		f.FieldType = FieldType{Kind: FieldEnum, Options: []string{"true", "false"}}
	case p.Type == "array":
		f.FieldType = FieldType{Kind: FieldArray}
	case len(p.Options()) > 0:
		f.FieldType = FieldType{Kind: FieldEnum, Options: p.Options()}
	}
	if p.Default != nil {
		var d string
		if p.Type == "string" {
			_ = json.Unmarshal(p.Default, &d)
		} else if p.Type == "array" {
			var vs []string
			_ = json.Unmarshal(p.Default, &vs)
			d = joinComma(vs)
		} else {
			d = string(bytes.TrimSpace(p.Default))
		}
		f.Default = &d
	}
	return f
}

// Value is a one-field answer to form field name as the field's JSON
// value: text parsed as a number, integer or boolean for those types.
func (s ElicitSchema) Value(name string, r ElicitResponse) (json.RawMessage, error) {
	p := s.Properties[name]
	var v json.RawMessage
	var err error
	switch {
	case p.Type == "array":
		v, err = json.Marshal(emptyIfNil(r.Values))
	case r.Value == nil:
		return nil, errors.New("no value")
	case p.Type == "string":
		v, err = json.Marshal(*r.Value)
	default:
		v = json.RawMessage(*r.Value)
		if !json.Valid(v) {
			return nil, fmt.Errorf("not a %s", p.Type)
		}
	}
	if err != nil {
		return nil, err
	}
	if err := p.checkValue(v); err != nil {
		return nil, err
	}
	return v, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func joinComma(vs []string) string {
	var b bytes.Buffer
	for i, v := range vs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(v)
	}
	return b.String()
}
