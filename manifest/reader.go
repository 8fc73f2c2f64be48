package manifest

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// checker collects the diagnostics of one manifest.
type checker struct {
	file     string
	diags    Diagnostics
	fileRefs []fileRef
}

func (c *checker) report(s Severity, at pos, key, format string, args ...any) {
	c.diags = append(c.diags, Diagnostic{
		Severity: s, File: c.file, Line: at.line, Col: at.col, Key: key,
		Message: fmt.Sprintf(format, args...),
	})
}

func (c *checker) errorf(at pos, key, format string, args ...any) {
	c.report(Error, at, key, format, args...)
}

func (c *checker) warnf(at pos, key, format string, args ...any) {
	c.report(Warning, at, key, format, args...)
}

func (c *checker) notef(at pos, key, format string, args ...any) {
	c.report(Note, at, key, format, args...)
}

// table reads one TOML table, remembering which keys were read so that
// whatever is left can be reported (nothing is silently ignored).
type table struct {
	c    *checker
	v    *value
	path string // display path of the table, e.g. `component[0]` or `publish."a.b"`
	seen map[string]bool
}

func (c *checker) table(v *value, path string) *table {
	return &table{c: c, v: v, path: path, seen: map[string]bool{}}
}

// keyPath is the display path of a key inside this table.
func (t *table) keyPath(key string) string { return joinKey(t.path, key) }

func joinKey(path, key string) string {
	k := quoteKey(key)
	if path == "" {
		return k
	}
	return path + "." + k
}

func quoteKey(key string) string {
	if key == "" {
		return `""`
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Sprintf("%q", key)
		}
	}
	return key
}

// section names the table for messages: [package], [[component]] #2, ...
func (t *table) String() string {
	if t.path == "" {
		return "the top level"
	}
	return "[" + t.path + "]"
}

// get returns the raw value of key and marks it read.
func (t *table) get(key string) *value {
	t.seen[key] = true
	return t.v.fields[key]
}

func (t *table) has(key string) bool { return t.v.fields[key] != nil }

// typed reports a value of the wrong kind and returns false.
func (t *table) typed(key string, v *value, want kind) bool {
	if v.kind == want {
		return true
	}
	t.c.errorf(v.at, t.keyPath(key), "%s must be %s, not %s", t.keyPath(key), want, v.kind)
	return false
}

func (t *table) str(key string) (string, *value) {
	v := t.get(key)
	if v == nil || !t.typed(key, v, kindString) {
		return "", nil
	}
	return v.scalar, v
}

// shortOrLong reads a value written either as a bare string (the short
// form) or as a table whose field holds that string (the long form). It
// returns the string and the value it came from (nil when absent or of the
// wrong type), and the long form's table (nil for the short form, whose
// caller has nothing more to read). A value of another kind is reported
// as notKind followed by the kind found, a table without field as
// missing; ok is then false (and t, for a table, still returned).
func (c *checker) shortOrLong(v *value, path, field, missing, notKind string) (s string, sv *value, t *table, ok bool) {
	switch v.kind {
	case kindString:
		return v.scalar, v, nil, true
	case kindTable:
		t = c.table(v, path)
		s, sv = t.str(field)
		if sv == nil && !t.has(field) {
			c.errorf(v.at, path, "%s", missing)
			return s, nil, t, false
		}
		return s, sv, t, true
	}
	c.errorf(v.at, path, "%s%s", notKind, v.kind)
	return "", nil, nil, false
}

// required reads a string that must be present and non-empty.
func (t *table) required(key string) (string, *value) {
	s, v := t.str(key)
	if v == nil && !t.has(key) {
		t.c.errorf(t.v.at, t.keyPath(key), "%s has no %s; add %s = \"…\"", t, key, quoteKey(key))
	} else if v != nil && strings.TrimSpace(s) == "" {
		t.c.errorf(v.at, t.keyPath(key), "%s must not be empty", t.keyPath(key))
		return s, nil
	}
	return s, v
}

func (t *table) boolean(key string) (bool, *value) {
	v := t.get(key)
	if v == nil || !t.typed(key, v, kindBool) {
		return false, nil
	}
	return v.scalar == "true", v
}

func (t *table) u32(key string) (uint32, *value) {
	v := t.get(key)
	if v == nil || !t.typed(key, v, kindInteger) {
		return 0, nil
	}
	n, err := v.integer()
	if err != nil || n < 0 || n > math.MaxUint32 {
		t.c.errorf(v.at, t.keyPath(key), "%s = %s is out of range: use an integer from 0 to %d", t.keyPath(key), v.scalar, uint32(math.MaxUint32))
		return 0, nil
	}
	return uint32(n), v
}

// strs reads an array of strings; each element keeps its position.
func (t *table) strs(key string) ([]string, []*value) {
	v := t.get(key)
	if v == nil || !t.typed(key, v, kindArray) {
		return nil, nil
	}
	var out []string
	var at []*value
	for i, it := range v.items {
		if it.kind != kindString {
			t.c.errorf(it.at, fmt.Sprintf("%s[%d]", t.keyPath(key), i), "%s must be a list of strings; element %d is %s", t.keyPath(key), i, it.kind)
			continue
		}
		out = append(out, it.scalar)
		at = append(at, it)
	}
	return out, at
}

func (t *table) sub(key string) *table {
	v := t.get(key)
	if v == nil || !t.typed(key, v, kindTable) {
		return nil
	}
	return t.c.table(v, t.keyPath(key))
}

// tables reads an array of tables, written as [[key]] or key = [{…}].
func (t *table) tables(key string) []*table {
	v := t.get(key)
	if v == nil {
		return nil
	}
	if v.kind == kindTable {
		t.c.errorf(v.at, t.keyPath(key), "[%s] must be written [[%s]] (a list of tables)", t.keyPath(key), t.keyPath(key))
		return nil
	}
	if !t.typed(key, v, kindArray) {
		return nil
	}
	var out []*table
	for i, it := range v.items {
		path := fmt.Sprintf("%s[%d]", t.keyPath(key), i)
		if it.kind != kindTable {
			t.c.errorf(it.at, path, "each %s entry must be a table, not %s", t.keyPath(key), it.kind)
			continue
		}
		out = append(out, t.c.table(it, path))
	}
	return out
}

// rest reports every key not read, as a warning; hint may explain a known
// key (legacy, or upstream-only) and returns "" for an unknown one.
func (t *table) rest(hint func(key string, v *value) string) {
	for _, k := range t.v.keys {
		if t.seen[k] {
			continue
		}
		v := t.v.fields[k]
		at := v.keyAt
		if at.line == 0 {
			at = v.at
		}
		msg := ""
		if hint != nil {
			msg = hint(k, v)
		}
		if msg == "" {
			msg = fmt.Sprintf("unknown key %s in %s has no effect here; remove it or check its spelling", quoteKey(k), t)
		}
		t.c.warnf(at, t.keyPath(k), "%s", msg)
	}
}

// sort puts diagnostics in file order; whole-file ones (no line) first.
// The sort is stable so findings at one position keep the order the checks
// made them in.
func (c *checker) sort() {
	sort.SliceStable(c.diags, func(i, j int) bool {
		a, b := c.diags[i], c.diags[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
}
