package sdk

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/astrid-go/astrid/internal/jsonscan"
)

// flatArgs decodes tool arguments into a flat struct (strings, integers,
// booleans, and pointers to them) without encoding/json, for the common
// call: an object whose keys are exactly the fields' names and whose values
// are strings, integers, booleans or null. Anything else (an unknown or
// differently-cased key, a \u escape, a float, a nested value) makes
// decode report false, and the caller decodes with encoding/json, which
// then decides; the result is the same either way (FuzzFlatArgs).
//
// Why: in a wasm guest encoding/json's scanner calls a function per byte,
// and each call of a branching function is a trip to the host's
// termination check (docs/rationale/engines.md): decoding fs's {"file_path":"…"}
// with encoding/json made the wasm round trip ≈ 40 µs (≈ 20 %) slower.
// It writes through reflect, as encoding/json does, never through unsafe.
type flatArgs struct {
	fields []flatField
	// index maps a key to its field; the fields are few, so a linear scan
	// of names would do as well, but a map keeps a 20-field struct cheap.
	index map[string]int
}

type flatField struct {
	name  string
	index int // the struct field's index
	kind  flatKind
	bits  int // of an integer
}

type flatKind uint8

const (
	flatString flatKind = iota
	flatInt
	flatBool
	flatPtrString
	flatPtrInt
	flatPtrBool
)

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// newFlatArgs returns the decoder of t, or nil when t is not a struct this
// decoder can fill exactly as encoding/json would.
func newFlatArgs(t reflect.Type) *flatArgs {
	if t.Kind() != reflect.Struct {
		return nil
	}
	d := &flatArgs{index: map[string]int{}}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			return nil // embedded fields are promoted by encoding/json's rules
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(","+opts+",", ",string,") || !plainTagName(name) {
			return nil
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := d.index[name]; dup {
			return nil // encoding/json ignores both; leave it to it
		}
		ff := flatField{name: name, index: i}
		ft := f.Type
		ptr := ft.Kind() == reflect.Pointer
		if ptr {
			ft = ft.Elem()
		}
		if ft.Implements(jsonUnmarshaler) || reflect.PointerTo(ft).Implements(jsonUnmarshaler) ||
			ft.Implements(textUnmarshaler) || reflect.PointerTo(ft).Implements(textUnmarshaler) {
			return nil
		}
		switch ft.Kind() {
		case reflect.String:
			ff.kind = flatString
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			ff.kind, ff.bits = flatInt, int(ft.Size())*8
		case reflect.Bool:
			ff.kind = flatBool
		default:
			return nil
		}
		if ptr {
			// Only pointers to the unnamed types: the value is made with new.
			if ft != reflect.TypeFor[string]() && ft != reflect.TypeFor[int]() && ft != reflect.TypeFor[bool]() {
				return nil
			}
			ff.kind += flatPtrString - flatString
		}
		d.index[name] = len(d.fields)
		d.fields = append(d.fields, ff)
	}
	if len(d.fields) > 64 {
		return nil
	}
	return d
}

// plainTagName reports whether name is a key this decoder compares as it
// is: encoding/json ignores a tag name with unusual characters (and uses
// the field's name), which is its business.
func plainTagName(name string) bool {
	for _, r := range name {
		if !(r == '_' || r == '-' || r == '.' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')) {
			return false
		}
	}
	return true
}

// decode fills the struct dst (settable) from raw, an object, and checks
// that the required keys were present. It reports false, with dst
// untouched, when raw is not in the form it decodes.
func (d *flatArgs) decode(raw []byte, dst reflect.Value, required []string) (ok bool, err error) {
	type set struct {
		f          *flatField
		start, end int // the value's text is raw[start:end]
		// str is an escaped string's value, decoded while checking; a
		// plain one is cut from the shared copy instead.
		str     string
		escaped bool
	}
	var sets [8]set
	pending := sets[:0]
	var seen uint64
	taken := true
	shaped := jsonscan.ScanObject(raw, func(m jsonscan.Member) bool {
		i, found := d.index[string(m.QuotedKey[1:len(m.QuotedKey)-1])]
		if m.Escaped || !found {
			taken = false
			return false
		}
		pending = append(pending, set{f: &d.fields[i], start: m.ValStart, end: m.End})
		seen |= 1 << i
		return true
	})
	if !shaped || !taken {
		return false, nil
	}
	// Parse every value before writing any, so that a value this decoder
	// does not take leaves dst as it was for encoding/json.
	var strs int
	for i := range pending {
		s := &pending[i]
		val := raw[s.start:s.end]
		switch ok, plain := flatValueOK(s.f, val); {
		case !ok:
			return false, nil
		case plain:
			strs++
		case val[0] == '"':
			if s.str, ok = jsonscan.DecodeString(val); !ok {
				return false, nil
			}
			s.escaped = true
		}
	}
	for _, name := range required {
		if i, ok := d.index[name]; !ok || seen&(1<<i) == 0 {
			return true, fmt.Errorf("missing field %q", name)
		}
	}
	// One copy of the arguments holds every plain string value.
	var all string
	if strs > 0 {
		all = string(raw)
	}
	for _, s := range pending {
		f := dst.Field(s.f.index)
		v := raw[s.start:s.end]
		if v[0] == 'n' { // null: a pointer becomes nil, anything else stays
			if s.f.kind >= flatPtrString {
				f.SetZero()
			}
			continue
		}
		switch s.f.kind {
		case flatString, flatPtrString:
			str := s.str
			if !s.escaped {
				str = all[s.start+1 : s.end-1]
			}
			if s.f.kind == flatString {
				f.SetString(str)
			} else {
				ps := new(string)
				*ps = str
				f.Set(reflect.ValueOf(ps))
			}
		case flatInt, flatPtrInt:
			n, _ := strconv.ParseInt(string(v), 10, s.f.bits) // checked by flatValueOK
			if s.f.kind == flatInt {
				f.SetInt(n)
			} else {
				pn := new(int)
				*pn = int(n)
				f.Set(reflect.ValueOf(pn))
			}
		case flatBool, flatPtrBool:
			if s.f.kind == flatBool {
				f.SetBool(v[0] == 't')
			} else {
				pb := new(bool)
				*pb = v[0] == 't'
				f.Set(reflect.ValueOf(pb))
			}
		}
	}
	return true, nil
}

// flatValueOK reports whether val is a value of f's kind that decode
// writes: a string, an integer literal in range, true, false, or null.
// plain reports a string literal whose body is its value; any other string
// is ok only if it decodes (jsonscan.DecodeString, which the caller runs).
func flatValueOK(f *flatField, val []byte) (ok, plain bool) {
	if string(val) == "null" {
		return true, false
	}
	switch f.kind {
	case flatString, flatPtrString:
		if jsonscan.PlainLiteral(val) {
			return true, true
		}
		return len(val) > 0 && val[0] == '"', false
	case flatInt, flatPtrInt:
		if !integerLiteral(val) {
			return false, false
		}
		_, err := strconv.ParseInt(string(val), 10, f.bits)
		return err == nil, false
	default:
		return string(val) == "true" || string(val) == "false", false
	}
}

// integerLiteral reports whether b is a JSON number without fraction or
// exponent: -?(0|[1-9][0-9]*).
func integerLiteral(b []byte) bool {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	if len(b) == 0 || (b[0] == '0' && len(b) > 1) {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
