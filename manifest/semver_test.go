package manifest

import (
	"strings"
	"testing"
)

func TestParseVersionStrict(t *testing.T) {
	good := []struct{ in, pre string }{
		{"0.0.0", ""},
		{"1.2.3", ""},
		{"10.20.30", ""},
		{"1.2.3-alpha", "alpha"},
		{"1.2.3-alpha.1", "alpha.1"},
		{"1.2.3-0.3.7", "0.3.7"},
		{"1.2.3-x.7.z.92", "x.7.z.92"},
		{"1.2.3-x-y-z.--", "x-y-z.--"},
		{"1.2.3-alpha+001", "alpha"},
		{"1.2.3+20130313144700", ""},
		{"1.0.0-beta+exp.sha.5114f85", "beta"},
		{"18446744073709551615.0.0", ""},
	}
	for _, tt := range good {
		v, err := ParseVersion(tt.in)
		if err != nil {
			t.Errorf("ParseVersion(%q) = %v", tt.in, err)
			continue
		}
		if v.Prerelease() != tt.pre || v.String() != tt.in {
			t.Errorf("ParseVersion(%q) = %q pre %q, want pre %q", tt.in, v, v.Prerelease(), tt.pre)
		}
	}
	bad := []struct{ in, contains string }{
		{"", "three"},
		{"1", "three"},
		{"1.2", "three"},
		{"1.2.3.4", "three"},
		{"v1.2.3", "not a number"},
		{"01.2.3", "leading zero"},
		{"1.02.3", "leading zero"},
		{"1.2.03", "leading zero"},
		{"1.2.3-01", "leading zero"},
		{"1.2.3-", "empty identifier"},
		{"1.2.3-a..b", "empty identifier"},
		{"1.2.3+", "empty identifier"},
		{"1.2.3-a_b", "only ASCII letters"},
		{"1.2.3-é", "only ASCII letters"},
		{"1.2.3+a b", "only ASCII letters"},
		{" 1.2.3", "not a number"},
		{"1.2.3 ", "not a number"},
		{"1..3", "empty number"},
		{"+1.2.3", "three"},
		{"18446744073709551616.0.0", "out of range"},
		{"1.2.3\x00", "not a number"},
	}
	for _, tt := range bad {
		_, err := ParseVersion(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.contains) {
			t.Errorf("ParseVersion(%q) = %v, want an error containing %q", tt.in, err, tt.contains)
		}
	}
}

// TestVersionPrecedence is semver.org §11's own example chain, plus the
// cases a byte comparison would get wrong.
func TestVersionPrecedence(t *testing.T) {
	chain := []string{
		"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
		"1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.1.0", "1.10.0", "2.0.0",
		"18446744073709551615.0.0",
	}
	vs := make([]*Version, len(chain))
	for i, s := range chain {
		v, err := ParseVersion(s)
		if err != nil {
			t.Fatal(err)
		}
		vs[i] = v
	}
	for i := range vs {
		for j := range vs {
			want := 0
			switch {
			case i < j:
				want = -1
			case i > j:
				want = 1
			}
			if got := vs[i].Compare(vs[j]); got != want {
				t.Errorf("%s.Compare(%s) = %d, want %d", vs[i], vs[j], got, want)
			}
		}
	}
	a, _ := ParseVersion("1.2.3+build.1")
	b, _ := ParseVersion("1.2.3+build.2")
	if a.Compare(b) != 0 {
		t.Error("build metadata must not count in precedence")
	}
	// Numeric identifiers longer than a uint64 still order numerically.
	x, _ := ParseVersion("1.0.0-99999999999999999999")
	y, _ := ParseVersion("1.0.0-100000000000000000000")
	if x.Compare(y) != -1 {
		t.Error("long numeric identifiers must order by value")
	}
}

// FuzzParseVersion: no input makes the parser panic, a version it accepts
// prints back as it was written, and precedence is a total order on what it
// accepts (reflexive, antisymmetric).
func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"1.2.3", "1.0.0-alpha.1+b.2", "0.0.0-0", "1.2.3-01", "1..3", "v1.2.3", "1.2.3-a.b.c.d.e"} {
		f.Add(s, "1.0.0-beta.11")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		va, err := ParseVersion(a)
		if err != nil {
			return
		}
		if va.String() != a {
			t.Fatalf("ParseVersion(%q).String() = %q", a, va.String())
		}
		if va.Compare(va) != 0 {
			t.Fatalf("%q does not equal itself", a)
		}
		vb, err := ParseVersion(b)
		if err != nil {
			return
		}
		if va.Compare(vb) != -vb.Compare(va) {
			t.Fatalf("Compare(%q, %q) = %d but the reverse %d", a, b, va.Compare(vb), vb.Compare(va))
		}
		if _, err := ParseRequirement(">=" + a); err == nil && va.Prerelease() == "" {
			if err := CheckRequirement(">="+a, a); err != nil {
				t.Fatalf("%q does not satisfy >= itself: %v", a, err)
			}
		}
	})
}
