package manifest

import (
	"errors"
	"sort"
	"strconv"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// The manifest is read in two passes: go-toml's decoder checks the document
// against the TOML specification (duplicate keys, redefined tables), then the
// parser's AST is folded into a tree of values that remembers where each key
// and value was written, in file order. Validation walks that tree, so every
// diagnostic can name a line and column, and nothing in the file goes unseen.

type kind int

const (
	kindTable kind = iota
	kindArray
	kindString
	kindBool
	kindInteger
	kindFloat
	kindDatetime
)

func (k kind) String() string {
	switch k {
	case kindTable:
		return "a table"
	case kindArray:
		return "an array"
	case kindString:
		return "a string"
	case kindBool:
		return "a boolean"
	case kindInteger:
		return "an integer"
	case kindFloat:
		return "a float"
	}
	return "a date-time"
}

type pos struct{ line, col int }

// value is one node of the positioned tree.
type value struct {
	kind   kind
	at     pos // where the value (or the table header) starts
	keyAt  pos // where its key is written; zero for array elements
	scalar string
	// Tables keep their keys in file order.
	keys   []string
	fields map[string]*value
	// Arrays; arrayOfTables marks the [[x]] form, which later headers extend.
	items         []*value
	arrayOfTables bool
}

func newTable(at pos) *value {
	return &value{kind: kindTable, at: at, keyAt: at, fields: map[string]*value{}}
}

func (v *value) set(key string, child *value) {
	if _, ok := v.fields[key]; !ok {
		v.keys = append(v.keys, key)
	}
	v.fields[key] = child
}

// child returns the table a header or dotted key walks into, creating it
// implicitly. A name bound to an array of tables walks into its last element.
func (v *value) child(key string, at pos) *value {
	switch f := v.fields[key]; {
	case f == nil:
		t := newTable(at)
		v.set(key, t)
		return t
	case f.kind == kindTable:
		return f
	case f.kind == kindArray && f.arrayOfTables && len(f.items) > 0:
		return f.items[len(f.items)-1]
	}
	// Unreachable for documents go-toml accepted; a detached table keeps
	// the walk total.
	return newTable(at)
}

// syntaxError is a TOML-level failure, positioned.
type syntaxError struct {
	at  pos
	msg string
}

func (e *syntaxError) Error() string { return e.msg }

// parseTree reads data into the positioned tree, or returns a *syntaxError.
func parseTree(data []byte) (*value, error) {
	var sink map[string]any
	if err := toml.Unmarshal(data, &sink); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, col := de.Position()
			return nil, &syntaxError{at: pos{line, col}, msg: strings.TrimPrefix(de.Error(), "toml: ")}
		}
		return nil, &syntaxError{at: pos{1, 1}, msg: err.Error()}
	}
	b := &treeBuilder{lines: lineStarts(data)}
	b.p.Reset(data)
	root := newTable(pos{1, 1})
	current := root
	for b.p.NextExpression() {
		e := b.p.Expression()
		switch e.Kind {
		case unstable.Table:
			current = root
			it := e.Key()
			for it.Next() {
				k := it.Node()
				current = current.child(string(k.Data), b.pos(k, pos{}))
			}
			current.at = b.pos(e.Child(), pos{})
		case unstable.ArrayTable:
			current = b.arrayTable(root, e)
		case unstable.KeyValue:
			b.keyValue(current, e)
		}
	}
	if err := b.p.Error(); err != nil {
		// go-toml accepted the document, so this does not happen; report it
		// rather than trust a partial tree.
		return nil, &syntaxError{at: pos{1, 1}, msg: err.Error()}
	}
	return root, nil
}

type treeBuilder struct {
	p     unstable.Parser
	lines []int
}

func lineStarts(data []byte) []int {
	starts := []int{0}
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// pos locates a node; nodes without a range (arrays) take the fallback.
func (b *treeBuilder) pos(n *unstable.Node, fallback pos) pos {
	if n == nil || n.Kind == unstable.Array {
		return fallback
	}
	off := int(n.Raw.Offset)
	line := sort.SearchInts(b.lines, off+1) // first start beyond off
	return pos{line: line, col: off - b.lines[line-1] + 1}
}

func (b *treeBuilder) arrayTable(root *value, e *unstable.Node) *value {
	var parts []*unstable.Node
	it := e.Key()
	for it.Next() {
		parts = append(parts, it.Node())
	}
	t := root
	for _, k := range parts[:len(parts)-1] {
		t = t.child(string(k.Data), b.pos(k, pos{}))
	}
	last := parts[len(parts)-1]
	at := b.pos(parts[0], pos{})
	elem := newTable(at)
	name := string(last.Data)
	switch f := t.fields[name]; {
	case f == nil:
		arr := &value{kind: kindArray, at: at, keyAt: b.pos(last, at), arrayOfTables: true}
		arr.items = append(arr.items, elem)
		t.set(name, arr)
	case f.kind == kindArray && f.arrayOfTables:
		f.items = append(f.items, elem)
	}
	return elem
}

func (b *treeBuilder) keyValue(t *value, e *unstable.Node) {
	var parts []*unstable.Node
	it := e.Key()
	for it.Next() {
		parts = append(parts, it.Node())
	}
	for _, k := range parts[:len(parts)-1] {
		t = t.child(string(k.Data), b.pos(k, pos{}))
	}
	last := parts[len(parts)-1]
	keyAt := b.pos(last, pos{})
	v := b.build(e.Value(), keyAt)
	v.keyAt = keyAt
	t.set(string(last.Data), v)
}

func (b *treeBuilder) build(n *unstable.Node, fallback pos) *value {
	at := b.pos(n, fallback)
	switch n.Kind {
	case unstable.InlineTable:
		t := newTable(at)
		it := n.Children()
		for it.Next() {
			if kv := it.Node(); kv.Kind == unstable.KeyValue {
				b.keyValue(t, kv)
			}
		}
		return t
	case unstable.Array:
		arr := &value{kind: kindArray, at: at}
		it := n.Children()
		first := true
		for it.Next() {
			c := it.Node()
			if c.Kind == unstable.Comment {
				continue
			}
			item := b.build(c, at)
			if first {
				arr.at = item.at
				first = false
			}
			arr.items = append(arr.items, item)
		}
		return arr
	case unstable.String:
		return &value{kind: kindString, at: at, scalar: string(n.Data)}
	case unstable.Bool:
		return &value{kind: kindBool, at: at, scalar: string(n.Data)}
	case unstable.Integer:
		return &value{kind: kindInteger, at: at, scalar: string(n.Data)}
	case unstable.Float:
		return &value{kind: kindFloat, at: at, scalar: string(n.Data)}
	}
	return &value{kind: kindDatetime, at: at, scalar: string(n.Data)}
}

// integer decodes a TOML integer literal (decimal with underscores, 0x, 0o, 0b).
func (v *value) integer() (int64, error) {
	return strconv.ParseInt(strings.ReplaceAll(v.scalar, "_", ""), 0, 64)
}

// toAny converts a value to plain Go data for JSON (metadata, env defaults).
func (v *value) toAny() any {
	switch v.kind {
	case kindTable:
		m := make(map[string]any, len(v.keys))
		for _, k := range v.keys {
			m[k] = v.fields[k].toAny()
		}
		return m
	case kindArray:
		l := make([]any, len(v.items))
		for i, it := range v.items {
			l[i] = it.toAny()
		}
		return l
	case kindBool:
		return v.scalar == "true"
	case kindInteger:
		if n, err := v.integer(); err == nil {
			return n
		}
	case kindFloat:
		if f, err := strconv.ParseFloat(strings.ReplaceAll(v.scalar, "_", ""), 64); err == nil {
			return f
		}
	}
	return v.scalar
}
