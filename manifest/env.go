package manifest

import (
	"encoding/json"
	"slices"
)

// readEnv reads [env], in file order.
func (c *checker) readEnv(top *table, m *Manifest) {
	env := top.sub("env")
	if env == nil {
		return
	}
	for _, key := range env.v.keys {
		t := env.sub(key)
		if t == nil {
			continue
		}
		e := EnvVar{Key: key}
		typ, tv := t.required("type")
		switch typ {
		case EnvSecret, EnvText, EnvSelect, EnvArray:
			e.Type = typ
		case "string":
			e.Type = EnvText
			c.warnf(tv.at, t.keyPath("type"), "env %s: type \"string\" is read as \"text\"; write type = \"text\"", key)
		default:
			if tv != nil {
				c.errorf(tv.at, t.keyPath("type"), "env %s: unknown type %q: use \"secret\", \"text\", \"select\" or \"array\"", key, typ)
			}
		}
		e.Request, _ = t.str("request")
		e.Description, _ = t.str("description")
		e.Placeholder, _ = t.str("placeholder")
		if dv := t.get("default"); dv != nil {
			s := dv.scalar
			if dv.kind != kindString {
				raw, _ := json.Marshal(jsonSafe(dv.toAny()))
				s = string(raw)
			}
			e.Default = &s
		}
		var ev []*value
		e.EnumValues, ev = t.strs("enum_values")
		if len(e.EnumValues) > 0 && e.Type == EnvSecret {
			c.warnf(ev[0].at, t.keyPath("enum_values"), "env %s: enum_values has no effect on a secret; remove it or use type = \"select\"", key)
		}
		if e.Type == EnvSelect && e.Default != nil && len(e.EnumValues) > 0 && !slices.Contains(e.EnumValues, *e.Default) {
			c.warnf(t.v.fields["default"].at, t.keyPath("default"), "env %s: default %q is not one of enum_values", key, *e.Default)
		}
		optKey := "options_from"
		if !t.has(optKey) && t.has("options-from") {
			optKey = "options-from"
		}
		if ot := t.sub(optKey); ot != nil {
			o := &OptionsFrom{Select: "data[].id"}
			o.HTTP, _ = ot.required("http")
			o.Bearer, _ = ot.str("bearer")
			if s, sv := ot.str("select"); sv != nil {
				o.Select = s
			}
			o.After, _ = ot.strs("after")
			ot.rest(nil)
			e.OptionsFrom = o
		}
		if e.Type == EnvSelect && len(e.EnumValues) == 0 && e.OptionsFrom == nil && tv != nil {
			c.warnf(tv.at, t.keyPath("type"), "env %s: a select with neither enum_values nor options_from offers no choices; it is asked as free text", key)
		}
		t.rest(func(k string, _ *value) string {
			switch k {
			case "scope":
				return "env " + key + ": scope is operator-only and never read from a manifest (the operator decides whether a value is shared); remove it"
			case "options_from", "options-from":
				return "env " + key + ": options_from and options-from are the same key; keep one"
			}
			return ""
		})
		m.Env = append(m.Env, e)
	}
}
