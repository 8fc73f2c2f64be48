package manifest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Severity grades a Diagnostic. An Error keeps the capsule from loading; a
// Warning does not, unless strict mode is on; a Note is information only.
type Severity int

// The three severities, most severe first.
const (
	Error Severity = iota
	Warning
	Note
)

func (s Severity) String() string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	case Note:
		return "note"
	}
	return fmt.Sprintf("severity(%d)", int(s))
}

// MarshalText spells the severity as in String, for --json output.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Diagnostic is one finding about a manifest, positioned at the key or value
// it concerns. Line and Col are 1-based; zero when the finding concerns the
// file as a whole (it cannot be read, for example).
type Diagnostic struct {
	Severity Severity `json:"severity"`
	File     string   `json:"file"`
	Line     int      `json:"line,omitempty"`
	Col      int      `json:"col,omitempty"`
	// Key is the TOML key path the finding is about, e.g.
	// `capabilities.ipc_publish` or `publish."a..b"`; empty if none.
	Key     string `json:"key,omitempty"`
	Message string `json:"message"`
}

// String renders the diagnostic as compilers do: file:line:col: severity: message.
func (d Diagnostic) String() string {
	if d.Line == 0 {
		return fmt.Sprintf("%s: %s: %s", d.File, d.Severity, d.Message)
	}
	return fmt.Sprintf("%s:%d:%d: %s: %s", d.File, d.Line, d.Col, d.Severity, d.Message)
}

// Diagnostics is everything found while loading one manifest, in file order
// as far as the checks allow.
type Diagnostics []Diagnostic

// HasErrors reports whether any diagnostic is an Error.
func (ds Diagnostics) HasErrors() bool { return ds.count(Error) > 0 }

// Count returns how many diagnostics have the given severity.
func (ds Diagnostics) Count(s Severity) int { return ds.count(s) }

func (ds Diagnostics) count(s Severity) int {
	n := 0
	for _, d := range ds {
		if d.Severity == s {
			n++
		}
	}
	return n
}

// Err returns nil when the manifest loads: no errors, and under strict no
// warnings either. Otherwise it returns a *LoadError listing the diagnostics
// that keep it from loading.
func (ds Diagnostics) Err(strict bool) error {
	var failing Diagnostics
	for _, d := range ds {
		if d.Severity == Error || strict && d.Severity == Warning {
			failing = append(failing, d)
		}
	}
	if len(failing) == 0 {
		return nil
	}
	return &LoadError{Diagnostics: failing}
}

// LoadError is the error of a manifest that does not load: one line per
// failing diagnostic.
type LoadError struct {
	Diagnostics Diagnostics
}

func (e *LoadError) Error() string {
	lines := make([]string, len(e.Diagnostics))
	for i, d := range e.Diagnostics {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// MarshalJSON keeps a nil Diagnostics an empty JSON list, so --json output
// has one shape.
func (ds Diagnostics) MarshalJSON() ([]byte, error) {
	if ds == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]Diagnostic(ds))
}
