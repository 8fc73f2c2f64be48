package manifest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Requirement is a version requirement read as Cargo reads it: comma-separated
// comparators, each an operator (=, >, >=, <, <=, ~, ^, or none, meaning ^)
// and a version of one to three parts, with * or x wildcards allowed after
// "=" or no operator. Cargo rejects `||` and hyphen ranges, and so do we.
type Requirement struct {
	text  string
	comps []comparator
}

type comparator struct {
	op           string // one of = > >= < <= ~ ^ and "*" for a bare wildcard
	major        uint64
	minor, patch *uint64
	pre          string
}

// ParseRequirement parses a Cargo-style requirement.
func ParseRequirement(s string) (Requirement, error) {
	text := strings.TrimSpace(s)
	switch {
	case text == "":
		return Requirement{}, errors.New("empty version requirement")
	case strings.Contains(text, "||"):
		return Requirement{}, fmt.Errorf("version requirement %q uses `||`, which Cargo syntax has no place for: keep one range (comparators joined by commas)", s)
	case strings.Contains(text, " - "):
		return Requirement{}, fmt.Errorf("version requirement %q is a hyphen range, which Cargo syntax does not have: write \">=A, <=B\"", s)
	}
	r := Requirement{text: text}
	for _, part := range strings.Split(text, ",") {
		c, err := parseComparator(strings.TrimSpace(part))
		if err != nil {
			return Requirement{}, fmt.Errorf("version requirement %q: %w", s, err)
		}
		r.comps = append(r.comps, c)
	}
	return r, nil
}

func parseComparator(s string) (comparator, error) {
	if s == "" {
		return comparator{}, errors.New("empty comparator (stray comma?)")
	}
	if s == "*" || s == "x" || s == "X" {
		return comparator{op: "*"}, nil
	}
	var c comparator
	for _, op := range []string{">=", "<=", "=", ">", "<", "~", "^"} {
		if strings.HasPrefix(s, op) {
			c.op, s = op, strings.TrimSpace(s[len(op):])
			break
		}
	}
	bare := c.op == ""
	wildcardOK := bare || c.op == "="
	if bare {
		c.op = "^"
	}
	core, pre, hasPre := strings.Cut(s, "-")
	core, _, _ = strings.Cut(core, "+") // build metadata never matters
	parts := strings.Split(core, ".")
	if len(parts) > 3 || parts[0] == "" {
		return comparator{}, fmt.Errorf("%q is not a version of one to three parts", s)
	}
	wild := false
	var nums []uint64
	for i, p := range parts {
		if p == "*" || p == "x" || p == "X" {
			if !wildcardOK || i == 0 {
				return comparator{}, fmt.Errorf("wildcard in %q is allowed only as the minor or patch of a bare or `=` comparator", s)
			}
			wild = true
			continue
		}
		if wild {
			return comparator{}, fmt.Errorf("%q: a number cannot follow a wildcard", s)
		}
		if len(p) > 1 && p[0] == '0' {
			return comparator{}, fmt.Errorf("%q: leading zero in %q", s, p)
		}
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return comparator{}, fmt.Errorf("%q: %q is not a number", s, p)
		}
		nums = append(nums, n)
	}
	if wild && bare {
		// 1.2.* is the range of its fixed parts, not a caret.
		c.op = "="
	}
	if hasPre {
		if len(nums) != 3 {
			return comparator{}, fmt.Errorf("%q: a pre-release needs a full MAJOR.MINOR.PATCH version", s)
		}
		v, err := parseStrictVersion(fmt.Sprintf("%d.%d.%d-%s", nums[0], nums[1], nums[2], pre))
		if err != nil {
			return comparator{}, fmt.Errorf("%q: pre-release %q: %w", s, pre, err)
		}
		c.pre = v.pre
	}
	c.major = nums[0]
	if len(nums) > 1 {
		c.minor = &nums[1]
	}
	if len(nums) > 2 {
		c.patch = &nums[2]
	}
	return c, nil
}

// String returns the requirement as written.
func (r Requirement) String() string { return r.text }

// Matches reports whether v satisfies every comparator. A pre-release version
// matches only when some comparator names a pre-release of the same
// MAJOR.MINOR.PATCH (Cargo's rule, so ^1.0 never picks 2.0.0-alpha).
func (r Requirement) Matches(v *Version) bool {
	if len(r.comps) == 0 {
		return false
	}
	for _, c := range r.comps {
		if !c.matches(v) {
			return false
		}
	}
	if v.Prerelease() == "" {
		return true
	}
	for _, c := range r.comps {
		if c.pre != "" && c.patch != nil && c.major == v.Major() && *c.minor == v.Minor() && *c.patch == v.Patch() {
			return true
		}
	}
	return false
}

func ver(major, minor, patch uint64, pre string) *Version {
	return newVersion(major, minor, patch, pre)
}

func (c comparator) matches(v *Version) bool {
	if c.op == "*" {
		return true
	}
	cmp := func(o *Version) int { return v.Compare(o) }
	lo := func() *Version { // the comparator's version, missing parts zero
		return ver(c.major, deref(c.minor), deref(c.patch), c.pre)
	}
	// between reports lower <= v < upper, upper built without pre-release.
	between := func(lower, upper *Version) bool { return cmp(lower) >= 0 && cmp(upper) < 0 }
	switch c.op {
	case "=":
		switch {
		case c.minor == nil:
			return between(ver(c.major, 0, 0, ""), ver(c.major+1, 0, 0, ""))
		case c.patch == nil:
			return between(ver(c.major, *c.minor, 0, ""), ver(c.major, *c.minor+1, 0, ""))
		}
		return cmp(lo()) == 0
	case ">":
		switch {
		case c.minor == nil:
			return cmp(ver(c.major+1, 0, 0, "")) >= 0
		case c.patch == nil:
			return cmp(ver(c.major, *c.minor+1, 0, "")) >= 0
		}
		return cmp(lo()) > 0
	case ">=":
		return cmp(lo()) >= 0
	case "<":
		return cmp(lo()) < 0
	case "<=":
		switch {
		case c.minor == nil:
			return cmp(ver(c.major+1, 0, 0, "")) < 0
		case c.patch == nil:
			return cmp(ver(c.major, *c.minor+1, 0, "")) < 0
		}
		return cmp(lo()) <= 0
	case "~":
		if c.minor == nil {
			return between(lo(), ver(c.major+1, 0, 0, ""))
		}
		return between(lo(), ver(c.major, *c.minor+1, 0, ""))
	}
	// "^": the leftmost non-zero part may not change.
	switch {
	case c.major > 0 || c.minor == nil:
		return between(lo(), ver(c.major+1, 0, 0, ""))
	case *c.minor > 0 || c.patch == nil:
		return between(lo(), ver(0, *c.minor+1, 0, ""))
	}
	return between(lo(), ver(0, 0, *c.patch+1, ""))
}

func deref(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

// ParseVersion parses a full MAJOR.MINOR.PATCH[-pre][+build] version.
func ParseVersion(s string) (*Version, error) {
	v, err := parseStrictVersion(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not a full semantic version MAJOR.MINOR.PATCH[-pre][+build]: %w", s, err)
	}
	return v, nil
}

// CheckRequirement reports whether version satisfies the Cargo-style
// requirement req; the error says which one is wrong or why they disagree.
func CheckRequirement(req, version string) error {
	r, err := ParseRequirement(req)
	if err != nil {
		return err
	}
	v, err := ParseVersion(version)
	if err != nil {
		return err
	}
	if !r.Matches(v) {
		return fmt.Errorf("version %s does not satisfy %s", version, req)
	}
	return nil
}
