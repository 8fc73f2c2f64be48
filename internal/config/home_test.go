package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHomeCreatesPrivateLayout(t *testing.T) {
	home := filepath.Join(t.TempDir(), "a", "astrid")
	t.Setenv(HomeEnv, home)
	got, err := Home()
	if err != nil {
		t.Fatal(err)
	}
	if got != home {
		t.Fatalf("Home() = %q, want %q", got, home)
	}
	p := Layout(home)
	for _, d := range []string{p.Home, p.Capsules, p.Principals, p.WasmCache, p.Run, p.Logs} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		if !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, want a 0700 directory", d, fi.Mode())
		}
	}
	// A second call finds everything in place.
	if _, err := Home(); err != nil {
		t.Fatalf("second Home(): %v", err)
	}
}

func TestHomeDefaultsToDotAstrid(t *testing.T) {
	user := t.TempDir()
	t.Setenv("HOME", user)
	t.Setenv(HomeEnv, "")
	got, err := Home()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(user, ".astrid"); got != want {
		t.Fatalf("Home() = %q, want %q", got, want)
	}
}

func TestHomeMakesARelativePathAbsolute(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv(HomeEnv, "state")
	got, err := Home()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "state"); got != want {
		t.Fatalf("Home() = %q, want %q", got, want)
	}
}

func TestHomeRefusesUnsafeDirectories(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, home string) // home exists, 0700, before setup
		wantErr string
	}{
		{"group-writable home", chmod("", 0o770), "writable by other users (mode 0770)"},
		{"world-writable home", chmod("", 0o777), "writable by other users (mode 0777)"},
		{"sticky world-writable home", chmod("", 0o1777), "writable by other users (mode 0777)"},
		{"world-writable capsules", mkdir("capsules", 0o703), "capsules: it is writable by other users"},
		{"group-writable wasm cache", mkdir("cache/wasm", 0o720), filepath.Join("cache", "wasm") + ": it is writable by other users"},
		{"file where run/ should be", func(t *testing.T, home string) {
			writeFile(t, filepath.Join(home, "run"), "")
		}, "run is not a directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "astrid")
			if err := os.Mkdir(home, 0o700); err != nil {
				t.Fatal(err)
			}
			tc.setup(t, home)
			t.Setenv(HomeEnv, home)
			_, err := Home()
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Home() err = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestHomeAcceptsAReadableHome(t *testing.T) {
	home := filepath.Join(t.TempDir(), "astrid")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	chmod("", 0o755)(t, home)
	t.Setenv(HomeEnv, home)
	if _, err := Home(); err != nil {
		t.Fatalf("Home() on a 0755 directory: %v", err)
	}
}

// chmod sets the mode of rel under home (umask does not apply to chmod).
func chmod(rel string, mode os.FileMode) func(*testing.T, string) {
	return func(t *testing.T, home string) {
		t.Helper()
		if err := os.Chmod(filepath.Join(home, rel), mode); err != nil {
			t.Fatal(err)
		}
	}
}

func mkdir(rel string, mode os.FileMode) func(*testing.T, string) {
	return func(t *testing.T, home string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(home, rel), 0o700); err != nil {
			t.Fatal(err)
		}
		chmod(rel, mode)(t, home)
	}
}
