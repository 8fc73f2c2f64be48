package manifest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Version is a semantic version (semver.org 2.0.0): MAJOR.MINOR.PATCH with an
// optional pre-release and build metadata. Its own parser replaced
// Masterminds/semver, whose package-level regexps cost every astrid process
// ≈ 0.3 ms of start-up (docs/rationale/daemon.md, "What does `astrid
// --version` spend before main …?").
type Version struct {
	major, minor, patch uint64
	pre                 string // dot-separated identifiers, "" for none
	build               string
}

// Major returns the version's major number.
func (v *Version) Major() uint64 { return v.major }

// Minor returns the version's minor number.
func (v *Version) Minor() uint64 { return v.minor }

// Patch returns the version's patch number.
func (v *Version) Patch() uint64 { return v.patch }

// Prerelease returns the pre-release without its leading '-', "" for none.
func (v *Version) Prerelease() string { return v.pre }

// String returns the version as written in canonical form.
func (v *Version) String() string {
	s := fmt.Sprintf("%d.%d.%d", v.major, v.minor, v.patch)
	if v.pre != "" {
		s += "-" + v.pre
	}
	if v.build != "" {
		s += "+" + v.build
	}
	return s
}

func newVersion(major, minor, patch uint64, pre string) *Version {
	return &Version{major: major, minor: minor, patch: patch, pre: pre}
}

// parseStrictVersion parses MAJOR.MINOR.PATCH[-pre][+build] by the letter
// of semver.org 2.0.0: no leading "v", no leading zeros in numbers or in
// numeric pre-release identifiers, no empty identifiers.
func parseStrictVersion(s string) (*Version, error) {
	rest, build, hasBuild := strings.Cut(s, "+")
	if hasBuild {
		if err := checkIdentifiers(build, "build metadata", false); err != nil {
			return nil, err
		}
	}
	core, pre, hasPre := strings.Cut(rest, "-")
	if hasPre {
		if err := checkIdentifiers(pre, "pre-release", true); err != nil {
			return nil, err
		}
	}
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return nil, errors.New("want three dot-separated numbers")
	}
	var nums [3]uint64
	for i, p := range parts {
		n, err := parseNumber(p)
		if err != nil {
			return nil, err
		}
		nums[i] = n
	}
	return &Version{major: nums[0], minor: nums[1], patch: nums[2], pre: pre, build: build}, nil
}

func parseNumber(p string) (uint64, error) {
	if p == "" {
		return 0, errors.New("empty number")
	}
	if !allDigits(p) {
		return 0, fmt.Errorf("%q is not a number", p)
	}
	if len(p) > 1 && p[0] == '0' {
		return 0, fmt.Errorf("leading zero in %q", p)
	}
	n, err := strconv.ParseUint(p, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is out of range", p)
	}
	return n, nil
}

// checkIdentifiers checks dot-separated identifiers of [0-9A-Za-z-]; a
// pre-release's numeric identifiers may not have leading zeros.
func checkIdentifiers(s, what string, numericNoLeadingZero bool) error {
	for _, id := range strings.Split(s, ".") {
		if id == "" {
			return fmt.Errorf("empty identifier in %s %q", what, s)
		}
		for i := 0; i < len(id); i++ {
			c := id[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-') {
				return fmt.Errorf("%s %q: %q may hold only ASCII letters, digits and '-'", what, s, id)
			}
		}
		if numericNoLeadingZero && len(id) > 1 && id[0] == '0' && allDigits(id) {
			return fmt.Errorf("%s %q: leading zero in %q", what, s, id)
		}
	}
	return nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// Compare returns -1, 0 or +1 as v's precedence is lower than, equal to or
// higher than o's (semver.org §11: build metadata does not count).
func (v *Version) Compare(o *Version) int {
	for _, d := range [3][2]uint64{{v.major, o.major}, {v.minor, o.minor}, {v.patch, o.patch}} {
		if d[0] != d[1] {
			if d[0] < d[1] {
				return -1
			}
			return 1
		}
	}
	return comparePrerelease(v.pre, o.pre)
}

// comparePrerelease orders pre-releases: none is higher than any; otherwise
// identifier by identifier, numbers numerically and below words, words in
// ASCII order, and a longer list higher when all before are equal.
func comparePrerelease(a, b string) int {
	switch {
	case a == b:
		return 0
	case a == "":
		return 1
	case b == "":
		return -1
	}
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if c := compareIdentifier(as[i], bs[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(as) < len(bs):
		return -1
	case len(as) > len(bs):
		return 1
	}
	return 0
}

func compareIdentifier(a, b string) int {
	an, bn := allDigits(a), allDigits(b)
	switch {
	case an && bn:
		// No leading zeros (checked at parse), so the longer is larger.
		if len(a) != len(b) {
			if len(a) < len(b) {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	case an:
		return -1
	case bn:
		return 1
	}
	return strings.Compare(a, b)
}
