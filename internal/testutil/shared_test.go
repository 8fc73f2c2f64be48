package testutil

import (
	"path/filepath"
	"testing"
)

// fakeTB records how NeedShared ended a test without ending this one.
type fakeTB struct {
	testing.TB
	fatal, skipped bool
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Fatalf(string, ...any) { f.fatal = true }
func (f *fakeTB) Skipf(string, ...any)  { f.skipped = true }

func TestNeedShared(t *testing.T) {
	present := t.TempDir()
	missing := filepath.Join(present, "no-such-corpus")
	tests := []struct {
		ci, path    string
		fatal, skip bool
	}{
		{ci: "", path: missing, skip: true},
		{ci: "false", path: missing, skip: true},
		{ci: "true", path: missing, fatal: true},
		{ci: "1", path: missing, fatal: true},
		{ci: "true", path: present},
		{ci: "", path: present},
	}
	for _, tc := range tests {
		t.Setenv("CI", tc.ci)
		f := &fakeTB{}
		got := NeedShared(f, tc.path)
		if f.fatal != tc.fatal || f.skipped != tc.skip {
			t.Errorf("CI=%q, %s: fatal=%v skipped=%v; want fatal=%v skipped=%v", tc.ci, tc.path, f.fatal, f.skipped, tc.fatal, tc.skip)
		}
		if got != tc.path {
			t.Errorf("NeedShared returned %q, want %q", got, tc.path)
		}
	}
}
