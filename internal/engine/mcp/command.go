package mcp

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrEscapesCapsule is wrapped by resolution errors for a command, or a fat
// binary slice, whose real path lies outside the capsule directory.
var ErrEscapesCapsule = errors.New("escapes the capsule directory")

// ErrNoSlice is wrapped when a fat binary directory has no file for this
// host's target triple.
var ErrNoSlice = errors.New("no slice for this host")

// resolveCommand turns the command as declared (already allowed by
// host_process) into what is executed. An absolute command is used as
// written, and so is a bare name (such as "node") that names nothing inside
// capsuleDir: it is found later through PATH. A command naming a file inside
// the capsule becomes that file's real path; one naming a directory becomes
// the real path of the file named triple inside it. Real paths must stay
// inside the capsule directory, so a symlink cannot lead out of it. A
// relative path with a separator that names nothing inside the capsule is
// refused: it could only be looked up relative to some other directory.
func resolveCommand(command, capsuleDir, triple string) (string, error) {
	bare := !strings.ContainsRune(command, '/') && !strings.ContainsRune(command, filepath.Separator)
	if filepath.IsAbs(command) {
		return command, nil
	}
	if capsuleDir == "" {
		if bare {
			return command, nil
		}
		return "", fmt.Errorf("command %q is a relative path and the capsule has no directory", command)
	}
	root, err := filepath.EvalSymlinks(capsuleDir)
	if err != nil {
		return "", fmt.Errorf("capsule directory %s: %w", capsuleDir, err)
	}
	if root, err = filepath.Abs(root); err != nil {
		return "", fmt.Errorf("capsule directory %s: %w", capsuleDir, err)
	}
	local := filepath.Join(capsuleDir, command)
	if _, err := os.Lstat(local); errors.Is(err, fs.ErrNotExist) {
		if bare {
			return command, nil
		}
		return "", fmt.Errorf("command %q: no such file in the capsule directory %s", command, capsuleDir)
	}
	real, err := filepath.EvalSymlinks(local)
	if err != nil {
		return "", fmt.Errorf("command %q: %w", command, err)
	}
	if !inside(real, root) {
		return "", fmt.Errorf("command %q resolves to %s: %w %s", command, real, ErrEscapesCapsule, root)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("command %q: %w", command, err)
	}
	if fi.IsDir() {
		return resolveSlice(command, real, root, triple)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("command %q resolves to %s, which is not a regular file", command, real)
	}
	return real, nil
}

// resolveSlice finds the file for triple in a fat binary directory.
func resolveSlice(command, dir, root, triple string) (string, error) {
	slice := filepath.Join(dir, triple)
	real, err := filepath.EvalSymlinks(slice)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("fat binary directory %q has no file for this host: %w (%s)", command, ErrNoSlice, triple)
	}
	if err != nil {
		return "", fmt.Errorf("fat binary directory %q: slice %s: %w", command, triple, err)
	}
	if !inside(real, root) {
		return "", fmt.Errorf("fat binary directory %q: slice %s resolves to %s: %w %s", command, triple, real, ErrEscapesCapsule, root)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("fat binary directory %q: slice %s: %w", command, triple, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("fat binary directory %q: slice %s is not a regular file", command, triple)
	}
	return real, nil
}

// inside reports whether path is root or below it; both are clean real
// paths, so a component-wise prefix test is exact.
func inside(path, root string) bool {
	if path == root {
		return true
	}
	return strings.HasPrefix(path, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}
