package manifest

import (
	"strings"
	"testing"
)

func TestCheckRequirementCargoSemantics(t *testing.T) {
	tests := []struct {
		req, version string
		ok           bool
	}{
		{"1.2", "1.2.0", true}, // bare means caret
		{"1.2", "1.9.9", true},
		{"1.2", "2.0.0", false},
		{"1.2", "1.1.9", false},
		{"^0.2.3", "0.2.9", true},
		{"^0.2.3", "0.3.0", false},
		{"^0.0.3", "0.0.3", true},
		{"^0.0.3", "0.0.4", false},
		{"^0.0", "0.0.9", true},
		{"^0.0", "0.1.0", false},
		{"^0", "0.9.0", true},
		{"~1.2.3", "1.2.9", true},
		{"~1.2.3", "1.3.0", false},
		{"~1", "1.9.0", true},
		{"=1.2", "1.2.7", true},
		{"=1.2", "1.3.0", false},
		{"=1.2.3", "1.2.3", true},
		{">1.2", "1.2.9", false}, // >1.2 means >=1.3.0
		{">1.2", "1.3.0", true},
		{"<=1.2", "1.2.9", true}, // <=1.2 means <1.3.0
		{"<=1.2", "1.3.0", false},
		{">=0.1.0", "0.1.0", true},
		{">=0.10.4", "0.1.0", false},
		{">=0.1, <1", "0.9.9", true},
		{">=0.1, <1", "1.0.0", false},
		{"1.*", "1.7.0", true},
		{"1.2.*", "1.3.0", false},
		{"*", "7.0.0", true},
		{"^1.0", "2.0.0-alpha", false},
		{"^1.0", "1.1.0-alpha", false}, // pre-releases need a comparator that names one
		{">=1.1.0-alpha", "1.1.0-beta", true},
		{">=1.1.0-alpha", "1.2.0-beta", false},
		{">= 1.2", "1.2.0", true},
	}
	for _, tt := range tests {
		err := CheckRequirement(tt.req, tt.version)
		if (err == nil) != tt.ok {
			t.Errorf("CheckRequirement(%q, %q) = %v, want ok=%v", tt.req, tt.version, err, tt.ok)
		}
	}
}

func TestParseRequirementRejectsNonCargo(t *testing.T) {
	tests := []struct{ req, contains string }{
		{"^1 || ^2", "`||`"},
		{"1.0 - 2.0", "hyphen range"},
		{"", "empty"},
		{"latest", "not a number"},
		{">=1.2 <2", "not a number"},
		{"1.2.3.4", "one to three parts"},
		{"01.2", "leading zero"},
		{">1.*", "wildcard"},
		{"1.2-alpha", "pre-release needs a full"},
		{"1.0,", "empty comparator"},
	}
	for _, tt := range tests {
		_, err := ParseRequirement(tt.req)
		if err == nil || !strings.Contains(err.Error(), tt.contains) {
			t.Errorf("ParseRequirement(%q) = %v, want an error containing %q", tt.req, err, tt.contains)
		}
	}
}

func TestCheckRequirementNamesBoth(t *testing.T) {
	err := CheckRequirement(">=99.0.0", "0.1.0")
	if err == nil || !strings.Contains(err.Error(), ">=99.0.0") || !strings.Contains(err.Error(), "0.1.0") {
		t.Errorf("err = %v", err)
	}
}
