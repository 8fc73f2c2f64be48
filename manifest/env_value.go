package manifest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Preset is the value key e takes when nobody set one: its default, or
// the only choice of a select with a single enum value (seed 003: it
// auto-fills without asking). ok is false for a required key.
func (e EnvVar) Preset() (value string, ok bool) {
	if e.Default != nil {
		return *e.Default, true
	}
	if e.Type == EnvSelect && len(e.EnumValues) == 1 {
		return e.EnumValues[0], true
	}
	return "", false
}

// Required reports whether the capsule cannot load until the key has a
// value: it declares no default (and is no single-choice select). An
// [env] key is a value the capsule requires (seed 003); a manifest marks
// one optional by giving it a default, if only "".
func (e EnvVar) Required() bool {
	_, ok := e.Preset()
	return !ok
}

// Check reports why value cannot be key e's: it is empty, or a select's
// value is not one of enum_values. The error does not quote a secret.
func (e EnvVar) Check(value string) error {
	if value == "" {
		return errors.New("the value is empty")
	}
	if e.Type == EnvSelect && len(e.EnumValues) > 0 && !slices.Contains(e.EnumValues, value) {
		return fmt.Errorf("%q is not one of %s", value, strings.Join(e.EnumValues, ", "))
	}
	return nil
}
