package capsulebuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// BuildCached builds the capsule package dir into cacheDir once per source
// state: the key covers the package's own files, the sdk, hostapi and ipc
// sources of this checkout and the Go version, so repeated test runs (and
// several test binaries of one run) share one build.
func BuildCached(ctx context.Context, dir, cacheDir string) (Result, error) {
	root, err := SourceRoot()
	if err != nil {
		return Result{}, err
	}
	key, err := sourceKey(dir, filepath.Join(root, "sdk"), filepath.Join(root, "hostapi"), filepath.Join(root, "ipc"))
	if err != nil {
		return Result{}, fmt.Errorf("capsule build %s: %w", dir, err)
	}
	if err := os.MkdirAll(cacheDir, 0o700); err != nil {
		return Result{}, err
	}
	out := filepath.Join(cacheDir, filepath.Base(dir)+"-"+key[:16]+".wasm")
	if _, err := os.Stat(out); err == nil {
		sum, err := HashFile(out)
		return Result{Wasm: out, SHA256: sum}, err
	}
	// Build beside the final name and rename, so a concurrent test binary
	// never sees a half-written module.
	tmp := fmt.Sprintf("%s.%d.tmp", out, os.Getpid())
	r, err := Build(ctx, Options{Dir: dir, Out: tmp, SDKDir: root})
	if err != nil {
		return Result{}, err
	}
	if err := os.Rename(tmp, out); err != nil {
		return Result{}, err
	}
	r.Wasm = out
	return r, nil
}

func sourceKey(dirs ...string) (string, error) {
	h := sha256.New()
	io.WriteString(h, runtime.Version()+"\n")
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		if err != nil {
			return "", err
		}
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			if !e.IsDir() && (strings.HasSuffix(e.Name(), ".go") || e.Name() == "go.mod") {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		for _, n := range names {
			b, err := os.ReadFile(filepath.Join(d, n))
			if err != nil {
				return "", err
			}
			fmt.Fprintf(h, "%s %d\n", filepath.Join(d, n), len(b))
			h.Write(b)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
