package config

import (
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

type position struct{ line, column int }

// written is where a key is written and what kind of value it holds.
type written struct {
	position               // of the key (of the element, for "key[i]")
	value    position      // of the value
	kind     unstable.Kind // of the value
}

// keyPositions indexes where each key of a document is written, so problems
// found outside the decoder can point at the line. Keys are dotted paths;
// array elements are "key[i]". A document with a syntax error yields what
// precedes the error (the decoder reports the error itself).
func keyPositions(data []byte) map[string]written {
	out := map[string]written{}
	var p unstable.Parser
	p.Reset(data)
	var table string
	// Parser.Shape rescans the document from its start on every call;
	// an index of line starts keeps a large file linear.
	lineStarts := []int{0}
	for i, b := range data {
		if b == '\n' {
			lineStarts = append(lineStarts, i+1)
		}
	}
	at := func(r unstable.Range) position {
		off := int(r.Offset)
		line := sort.SearchInts(lineStarts, off+1) // lines starting at or before off
		return position{line, off - lineStarts[line-1] + 1}
	}
	var record func(prefix string, kv *unstable.Node)
	record = func(prefix string, kv *unstable.Node) {
		it := kv.Key()
		var parts []string
		first := true
		var pos position
		for it.Next() {
			if first {
				pos, first = at(it.Node().Raw), false
			}
			parts = append(parts, string(it.Node().Data))
		}
		key := join(prefix, strings.Join(parts, "."))
		v := kv.Value()
		out[key] = written{position: pos, value: at(v.Raw), kind: v.Kind}
		switch v.Kind {
		case unstable.Array:
			elems := v.Children()
			for i := 0; elems.Next(); i++ {
				e := elems.Node()
				out[key+"["+strconv.Itoa(i)+"]"] = written{position: at(e.Raw), value: at(e.Raw), kind: e.Kind}
			}
		case unstable.InlineTable:
			children := v.Children()
			for children.Next() {
				record(key, children.Node())
			}
		}
	}
	// An array of tables' elements are "key[i]", each at its header.
	elements := map[string]int{}
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			var parts []string
			it := e.Key()
			var pos position
			for first := true; it.Next(); first = false {
				if first {
					pos = at(it.Node().Raw)
				}
				parts = append(parts, string(it.Node().Data))
			}
			table = strings.Join(parts, ".")
			if e.Kind == unstable.ArrayTable {
				i := elements[table]
				elements[table] = i + 1
				if i == 0 {
					out[table] = written{position: pos, value: pos, kind: unstable.Array}
				}
				table += "[" + strconv.Itoa(i) + "]"
				out[table] = written{position: pos, value: pos, kind: unstable.Table}
			}
		case unstable.KeyValue:
			record(table, e)
		}
	}
	return out
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}
