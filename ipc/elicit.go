package ipc

import (
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"
)

// Bounds of an elicit answer, checked by the host that takes it and by a
// frontend before it sends one.
const (
	// MaxElicitAnswer caps a Value, or all Values together, in bytes.
	MaxElicitAnswer = 64 << 10
	// MaxElicitValues caps the items of an array answer.
	MaxElicitValues = 256
)

// Cancelled reports whether r is the person declining to answer: neither
// Value nor Values set.
func (r ElicitResponse) Cancelled() bool {
	return r.Value == nil && r.Values == nil && r.Content == nil
}

// CheckAnswer reports why r cannot answer a question about f: a select
// (Enum) is answered by one of its options, an array by Values, anything
// else by Value; sizes are bounded (MaxElicitAnswer, MaxElicitValues) and
// the text is UTF-8. A cancelled r passes. The error never quotes the
// answer, which may be a secret.
func (f OnboardingField) CheckAnswer(r ElicitResponse) error {
	if r.Cancelled() {
		return nil
	}
	if r.Content != nil {
		return errors.New("a field is answered with value or values, not a form's content")
	}
	if f.FieldType.Kind == FieldArray {
		if r.Value != nil {
			return errors.New("an array is answered with values, not value")
		}
		if len(r.Values) > MaxElicitValues {
			return fmt.Errorf("%d values, more than %d", len(r.Values), MaxElicitValues)
		}
		total := 0
		for _, v := range r.Values {
			total += len(v)
			if !utf8.ValidString(v) {
				return errors.New("a value is not UTF-8")
			}
		}
		if total > MaxElicitAnswer {
			return fmt.Errorf("the values hold %d bytes, more than %d", total, MaxElicitAnswer)
		}
		return nil
	}
	if r.Values != nil || r.Value == nil {
		return fmt.Errorf("a %s field is answered with value, not values", f.FieldType.Kind)
	}
	v := *r.Value
	if len(v) > MaxElicitAnswer {
		return fmt.Errorf("the value holds %d bytes, more than %d", len(v), MaxElicitAnswer)
	}
	if !utf8.ValidString(v) {
		return errors.New("the value is not UTF-8")
	}
	if f.FieldType.Kind == FieldEnum && !slices.Contains(f.FieldType.Options, v) {
		return fmt.Errorf("the value is not one of the %d options", len(f.FieldType.Options))
	}
	return nil
}
