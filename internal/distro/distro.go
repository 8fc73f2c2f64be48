package distro

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/astrid-go/astrid/manifest"
)

// FileName and LockName are the files' usual names.
const (
	FileName = "Distro.toml"
	LockName = "Distro.lock"
)

// Distro is Distro.toml.
type Distro struct {
	Distro   Header    `toml:"distro"`
	Capsules []Capsule `toml:"capsule"`
}

// Header names the distro.
type Header struct {
	Name        string `toml:"name"`
	Version     string `toml:"version"`
	Description string `toml:"description,omitempty"`
}

// Capsule is one [[capsule]] of Distro.toml.
type Capsule struct {
	// Name is the capsule's package name; the archive must have it.
	Name string `toml:"name"`
	// Version is a requirement ("0.1", "^0.2", ">=1.0.0") the archive's
	// version must satisfy; empty: any.
	Version string `toml:"version,omitempty"`
	// Source is where it is installed from: oci://…:tag or @digest,
	// https://…, or a .capsule file (relative to Distro.toml).
	Source string `toml:"source"`
}

// Parse reads Distro.toml; errors name file (and the line, when the TOML
// decoder or the capsule's name locates it).
func Parse(file string, data []byte) (*Distro, error) {
	var d Distro
	if err := decode(file, data, &d); err != nil {
		return nil, err
	}
	var errs []error
	at := func(name, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: %s", file, lineOf(data, name), fmt.Sprintf(format, a...)))
	}
	if d.Distro.Name == "" {
		at("[distro]", "[distro] needs a name")
	}
	if len(d.Capsules) == 0 {
		at("", "no [[capsule]]: a distro names at least one capsule")
	}
	seen := map[string]bool{}
	for i, c := range d.Capsules {
		where := c.Name
		if where == "" {
			where = "[[capsule]]"
		}
		if err := manifest.ValidateID(c.Name); err != nil {
			at(where, "capsule[%d]: name: %v", i, err)
		}
		if seen[c.Name] {
			at(where, "capsule %s is listed twice", c.Name)
		}
		seen[c.Name] = true
		if c.Version != "" {
			if _, err := manifest.ParseRequirement(c.Version); err != nil {
				at(where, "capsule %s: version %q: %v", c.Name, c.Version, err)
			}
		}
		if c.Source == "" {
			at(where, "capsule %s has no source (oci://host/ns/name:tag, https://…, or a .capsule file)", c.Name)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &d, nil
}

// decode is strict TOML decoding with the decoder's position in errors.
func decode(file string, data []byte, v any) error {
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		return nil
	}
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		e := &strict.Errors[0]
		line, _ := e.Position()
		return fmt.Errorf("%s:%d: unknown key %s", file, line, strings.Join(e.Key(), "."))
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, _ := de.Position()
		return fmt.Errorf("%s:%d: %s", file, line, strings.TrimPrefix(de.Error(), "toml: "))
	}
	return fmt.Errorf("%s: %w", file, err)
}

// lineOf is the first line holding `"name"` (or name when it is a
// bracketed header), 1 when none does.
func lineOf(data []byte, name string) int {
	if name == "" {
		return 1
	}
	needle := `"` + name + `"`
	if strings.HasPrefix(name, "[") {
		needle = name
	}
	for i, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, needle) {
			return i + 1
		}
	}
	return 1
}
