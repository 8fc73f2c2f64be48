package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// ReservedID is the source id of the kernel's own events; no capsule may take it.
const ReservedID = "kernel"

func (c *checker) readPackage(top *table, m *Manifest) {
	pkg := top.sub("package")
	if pkg == nil {
		if !top.has("package") {
			c.errorf(pos{1, 1}, "package", "missing [package]: every Capsule.toml starts with [package] and its name and version")
		}
		return
	}
	p := &m.Package
	var v *value
	if p.Name, v = pkg.required("name"); v != nil {
		if err := ValidateID(p.Name); err != nil {
			c.errorf(v.at, "package.name", "%v", err)
		}
	}
	if p.Version, v = pkg.required("version"); v != nil {
		if _, err := ParseVersion(p.Version); err != nil {
			c.errorf(v.at, "package.version", "invalid package.version: %v (for example \"0.1.0\")", err)
		}
	}
	if p.AstridVersion, v = pkg.str("astrid-version"); v != nil {
		c.checkRuntimeVersion(p.AstridVersion, v)
	}
	p.Description, _ = pkg.str("description")
	p.Authors, _ = pkg.strs("authors")
	p.License, _ = pkg.str("license")
	p.LicenseFile, _ = pkg.str("license-file")
	p.Readme, _ = pkg.str("readme")
	p.Homepage, _ = pkg.str("homepage")
	p.Repository, _ = pkg.str("repository")
	p.Documentation, _ = pkg.str("documentation")
	p.Keywords, _ = pkg.strs("keywords")
	p.Categories, _ = pkg.strs("categories")
	if b, v := pkg.boolean("publish"); v != nil {
		p.Publish = &b
	}
	p.Include, _ = pkg.strs("include")
	p.Exclude, _ = pkg.strs("exclude")
	if v := pkg.get("metadata"); v != nil {
		// Metadata is free-form for tools; the kernel keeps it as JSON.
		if raw, err := json.Marshal(jsonSafe(v.toAny())); err == nil {
			p.Metadata = raw
		}
	}
	pkg.rest(nil)
}

func (c *checker) checkRuntimeVersion(req string, v *value) {
	r, err := ParseRequirement(req)
	if err != nil {
		c.errorf(v.at, "package.astrid-version", "invalid astrid-version: %v", err)
		return
	}
	rt, err := ParseVersion(RuntimeVersion)
	if err != nil {
		c.errorf(v.at, "package.astrid-version", "this runtime's own version is broken: %v", err)
		return
	}
	if !r.Matches(rt) {
		c.errorf(v.at, "package.astrid-version", "capsule requires astrid-version %s, but this runtime is %s; use a runtime that satisfies it or relax the requirement", req, RuntimeVersion)
	}
}

// MaxIDLength bounds a capsule id: it names a directory, NATS subjects and
// store buckets, and upstream's longest is under 40 bytes.
const MaxIDLength = 64

// ValidateID checks a capsule id (a package name): non-empty, at most
// MaxIDLength bytes of lowercase ASCII letters, digits and hyphens, neither
// starting nor ending with a hyphen (`capsule remove -rf` must not read as
// flags), and not the kernel's reserved id.
func ValidateID(id string) error {
	if id == "" {
		return errors.New("capsule id (package.name) must not be empty")
	}
	if len(id) > MaxIDLength {
		return fmt.Errorf("capsule id (package.name) %.20q… is %d bytes long; at most %d are allowed", id, len(id), MaxIDLength)
	}
	if id[0] == '-' || id[len(id)-1] == '-' {
		return fmt.Errorf("capsule id (package.name) %q must start and end with a letter or digit, not a hyphen", id)
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return fmt.Errorf("capsule id (package.name) %q may use only lowercase ASCII letters, digits and hyphens; %q is not allowed", id, r)
		}
	}
	if id == ReservedID {
		return fmt.Errorf("capsule id %q is reserved for the kernel's own events", id)
	}
	return nil
}

// jsonSafe replaces what JSON cannot carry (inf, nan) by its TOML spelling.
func jsonSafe(x any) any {
	switch t := x.(type) {
	case float64:
		if math.IsInf(t, 0) || math.IsNaN(t) {
			return formatSpecial(t)
		}
	case map[string]any:
		for k, v := range t {
			t[k] = jsonSafe(v)
		}
	case []any:
		for i, v := range t {
			t[i] = jsonSafe(v)
		}
	}
	return x
}

func formatSpecial(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case f > 0:
		return "inf"
	}
	return "-inf"
}
