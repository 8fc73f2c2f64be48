package manifest

import (
	"fmt"
	"strings"
)

// readInterfaces reads [imports] and [exports] in the flat form
// ("astrid:session" = "^1.0") and the nested form ([imports.astrid]
// session = "^1.0"), which may be mixed.
func (c *checker) readInterfaces(top *table, m *Manifest) {
	m.Imports = collectInterfaces(c, top.sub("imports"), "import", c.readImport)
	m.Exports = collectInterfaces(c, top.sub("exports"), "export", c.readExport)
}

// collectInterfaces reads every interface of t (nil: none) with read,
// refusing one declared in both the flat and the nested form.
func collectInterfaces[T any](c *checker, t *table, kind string, read func(name string, v *value, path string) (T, bool)) []T {
	if t == nil {
		return nil
	}
	var out []T
	seen := map[string]bool{}
	c.eachInterface(t, func(name string, v *value, path string) {
		item, ok := read(name, v, path)
		if !ok {
			return
		}
		if seen[name] {
			c.errorf(v.keyAt, path, "%s %s is declared twice (flat and nested form); keep one", kind, name)
			return
		}
		seen[name] = true
		out = append(out, item)
	})
	return out
}

// eachInterface calls f for every declared interface with its
// "namespace:name", after checking both parts.
func (c *checker) eachInterface(t *table, f func(name string, v *value, path string)) {
	section := t.path
	for _, key := range t.v.keys {
		v := t.get(key)
		path := t.keyPath(key)
		if ns, iface, flat := strings.Cut(key, ":"); flat {
			if !c.interfaceName(section, ns, iface, v.keyAt, path) {
				continue
			}
			f(ns+":"+iface, v, path)
			continue
		}
		if v.kind != kindTable {
			c.errorf(v.keyAt, path, "[%s] key %q is neither \"namespace:name\" nor a [%s.%s] table of interfaces; write \"%s:%s\" = …", section, key, section, key, "astrid", key)
			continue
		}
		if !validInterfacePart(key) {
			c.errorf(v.keyAt, path, "[%s.%s]: invalid namespace %q: a lowercase letter then lowercase letters, digits or hyphens", section, key, key)
			continue
		}
		nested := c.table(v, path)
		for _, ikey := range v.keys {
			iv := nested.get(ikey)
			ipath := nested.keyPath(ikey)
			if !c.interfaceName(section, key, ikey, iv.keyAt, ipath) {
				continue
			}
			f(key+":"+ikey, iv, ipath)
		}
	}
}

func (c *checker) interfaceName(section, ns, iface string, at pos, path string) bool {
	for _, part := range []struct{ what, s string }{{"namespace", ns}, {"interface name", iface}} {
		if !validInterfacePart(part.s) {
			c.errorf(at, path, "[%s] %q: invalid %s %q: names are \"namespace:name\", each part a lowercase letter then lowercase letters, digits or hyphens", section, ns+":"+iface, part.what, part.s)
			return false
		}
	}
	return true
}

func validInterfacePart(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

func (c *checker) readImport(name string, v *value, path string) (Import, bool) {
	imp := Import{Name: name}
	req, rv, t, ok := c.shortOrLong(v, path, "version",
		fmt.Sprintf("import %s has no version; write { version = \"^1.0\" }", name),
		"import "+name+" must be a requirement string or { version, optional }, not ")
	if !ok {
		return imp, false
	}
	imp.Requirement = req
	if t != nil {
		imp.Optional, _ = t.boolean("optional")
		t.rest(nil)
	}
	if rv == nil {
		return imp, false
	}
	if _, err := ParseRequirement(imp.Requirement); err != nil {
		c.errorf(rv.at, path, "import %s: invalid version requirement: %v", name, err)
		return imp, false
	}
	return imp, true
}

func (c *checker) readExport(name string, v *value, path string) (Export, bool) {
	exp := Export{Name: name}
	version, vv, t, ok := c.shortOrLong(v, path, "version",
		fmt.Sprintf("export %s has no version; write { version = \"1.0.0\" }", name),
		"export "+name+" must be a version string, not ")
	if !ok {
		return exp, false
	}
	exp.Version = version
	if t != nil {
		t.rest(nil)
	}
	if vv == nil {
		return exp, false
	}
	if _, err := ParseVersion(exp.Version); err != nil {
		c.errorf(vv.at, path, "export %s: %v", name, fmt.Errorf("invalid version: %w", err))
		return exp, false
	}
	return exp, true
}
