package sdk

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// SchemaOf returns the JSON Schema of a tool's argument type A. Exported
// fields are properties named by their json tag; a field is required unless
// it is a pointer or tagged omitempty/omitzero; the `desc` tag becomes the
// property's description. The schema always has a "properties" object (some
// LLM APIs require it).
func SchemaOf[A any]() (json.RawMessage, error) {
	s, _, err := schemaOf[A]()
	return s, err
}

func schemaOf[A any]() (json.RawMessage, []string, error) {
	t := reflect.TypeFor[A]()
	if t.Kind() != reflect.Struct {
		return nil, nil, fmt.Errorf("tool arguments must be a struct, got %s", t)
	}
	obj, required, err := structSchema(t, 0)
	if err != nil {
		return nil, nil, err
	}
	obj["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	b, err := json.Marshal(obj)
	return b, required, err
}

func structSchema(t reflect.Type, depth int) (map[string]any, []string, error) {
	if depth > 8 {
		return nil, nil, fmt.Errorf("argument type %s nests too deeply", t)
	}
	props := map[string]any{}
	required := []string{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		prop, err := typeSchema(f.Type, depth+1)
		if err != nil {
			return nil, nil, fmt.Errorf("field %s: %w", f.Name, err)
		}
		if d := f.Tag.Get("desc"); d != "" {
			prop["description"] = d
		}
		props[name] = prop
		optional := f.Type.Kind() == reflect.Pointer || strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
		if !optional {
			required = append(required, name)
		}
	}
	obj := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		obj["required"] = required
	}
	return obj, required, nil
}

func typeSchema(t reflect.Type, depth int) (map[string]any, error) {
	if t == reflect.TypeFor[json.RawMessage]() {
		return map[string]any{}, nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return typeSchema(t.Elem(), depth)
	case reflect.String:
		return map[string]any{"type": "string"}, nil
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}, nil
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}, nil
	case reflect.Slice, reflect.Array:
		items, err := typeSchema(t.Elem(), depth+1)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": items}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("map keys must be strings, got %s", t.Key())
		}
		vals, err := typeSchema(t.Elem(), depth+1)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "object", "additionalProperties": vals}, nil
	case reflect.Struct:
		obj, _, err := structSchema(t, depth)
		return obj, err
	case reflect.Interface:
		return map[string]any{}, nil
	}
	return nil, fmt.Errorf("unsupported argument type %s", t)
}
