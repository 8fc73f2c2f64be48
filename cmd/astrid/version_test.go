package main

import (
	"testing"

	"github.com/astrid-go/astrid/manifest"
)

// `astrid --version` is what people try first: it prints what `astrid
// version` prints, and -v stays the verbose flag.
func TestVersionFlagAndCommandAgree(t *testing.T) {
	want := "astrid " + manifest.RuntimeVersion + "\n"
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, errOut, code := runAstrid(t, "", args...)
		if code != 0 || out != want {
			t.Errorf("astrid %v = %q (exit %d, stderr %q), want %q", args, out, code, errOut, want)
		}
	}
	if f := newRootCmd().PersistentFlags().ShorthandLookup("v"); f == nil || f.Name != verboseFlag {
		t.Errorf("-v is %v, want the %s flag", f, verboseFlag)
	}
}
