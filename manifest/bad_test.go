package manifest

import (
	"fmt"
	"strings"
	"testing"
)

// Each rejection EXPECTED.md lists, one manifest per rejection: it must fail
// with exactly one error, at the position that names the culprit.
func TestRejections(t *testing.T) {
	tests := []struct {
		file      string
		line, col int
		contains  string
	}{
		{"missing-package.toml", 1, 1, "missing [package]"},
		{"missing-name.toml", 1, 2, "has no name"},
		{"missing-version.toml", 1, 2, "has no version"},
		{"version-not-semver.toml", 3, 11, `invalid package.version: "1.0" is not a full semantic version`},
		{"name-not-id.toml", 2, 8, `capsule id (package.name) "My_Capsule" may use only lowercase`},
		{"topic-double-dot.toml", 6, 1, `[publish] key "a..b" is not a valid topic pattern`},
		{"topic-leading-dot.toml", 6, 1, `[subscribe] key ".a" is not a valid topic pattern`},
		{"topic-trailing-dot.toml", 6, 1, `[subscribe] key "a." is not a valid topic pattern`},
		{"two-pins.toml", 6, 12, `[publish] "x.v1.y" sets version and tag: at most one of version / tag / rev / branch / path`},
		{"priority-without-handler.toml", 6, 30, `[subscribe] "x.v1.y" sets priority without a handler`},
		{"env-unknown-type.toml", 6, 8, `env token: unknown type "password"`},
		{"path-traversal.toml", 6, 28, `fs_read grant "home://../other-user" contains a ` + "`..`"},
		{"import-name.toml", 6, 1, `invalid namespace "Astrid"`},
		{"export-name.toml", 6, 1, `invalid interface name "BAD_NAME"`},
		{"import-requirement.toml", 6, 23, "import astrid:session: invalid version requirement"},
		{"export-version.toml", 6, 20, `export astrid:context: invalid version: "1.0" is not a full semantic version`},
		{"duplicate-key.toml", 4, 1, "not valid TOML"},
		{"asks-approval-not-mutable.toml", 8, 17, `tool "run" sets asks_approval without mutable = true`},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := "testdata/bad/" + tt.file
			_, diags := Load(path)
			err := diags.Err(false)
			if err == nil {
				t.Fatalf("%s loads; want an error", path)
			}
			errs := find(diags, Error)
			if len(errs) != 1 {
				t.Fatalf("want exactly one error, got:\n%s", render(diags))
			}
			wantPrefix := fmt.Sprintf("%s:%d:%d: error: ", path, tt.line, tt.col)
			line := err.Error()
			if !strings.HasPrefix(line, wantPrefix) || !strings.Contains(line, tt.contains) || strings.Contains(line, "\n") {
				t.Errorf("error:\n  %s\nwant one line starting %q containing %q", line, wantPrefix, tt.contains)
			}
		})
	}
}
