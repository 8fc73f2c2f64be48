//go:build !linux && !darwin

package host

import (
	"os"
	"path/filepath"
)

// realPath resolves lexical, the path f was opened by, with
// filepath.EvalSymlinks: this system offers no way to ask the kernel where
// an open file lies, so a swap between the open and this check is not
// caught here (the gate's lexical refusal still holds).
func realPath(f *os.File, lexical string) (string, error) {
	p, err := filepath.EvalSymlinks(filepath.FromSlash(lexical))
	if err != nil {
		return "", err
	}
	return filepath.ToSlash(p), nil
}
