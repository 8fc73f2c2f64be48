package manifest

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: no input makes Parse panic, every diagnostic is positioned
// inside the input, and a manifest is returned unless the TOML is invalid.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*/*.toml")
	full, _ := filepath.Glob("testdata/full/Capsule.toml")
	corpus, _ := filepath.Glob(filepath.Join(conformanceDir, "*.toml"))
	for _, p := range append(append(seeds, full...), corpus...) {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("[package]\nname = \"x\"\nversion = \"0.1.0\"\n[[component]]\nfile = \"a\"\n[component.capabilities]\nnet = [1]\n"))
	f.Add([]byte("a.b.c = 1\n[a]\n[[a.d]]\n[[a.d]]\nx = { y = [ { z = 1 } ] }\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, diags := Parse(data, "Capsule.toml", "")
		lines := 1
		for _, c := range data {
			if c == '\n' {
				lines++
			}
		}
		for _, d := range diags {
			if d.Line < 1 || d.Line > lines || d.Col < 1 {
				t.Fatalf("diagnostic outside the input (%d lines): %s", lines, d)
			}
		}
		if m == nil && !diags.HasErrors() {
			t.Fatal("nil manifest without an error")
		}
		if m != nil {
			_ = m.Engines()
			_ = m.Interceptors()
		}
	})
}
