package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Policy is what one confined process may reach. Paths are absolute; a
// path that does not exist is left out (nothing can reach it, nor create
// it). Symbolic links in a path are resolved before it is granted, so a
// rule always names the place the OS will check.
type Policy struct {
	// Read lists files and directories the process may read, list and
	// execute, with everything beneath them.
	Read []string
	// Write lists files and directories it may also create, change,
	// rename and remove things in.
	Write []string
	// Devices lists device files it may read, write and ioctl (/dev/null,
	// /dev/tty): device rights are granted by name only.
	Devices []string
	// Exclude lists directories no rule reaches, whatever Read and Write
	// say: Astrid's home. A granted directory that contains one is granted
	// entry by entry around it (see expandAround).
	Exclude []string
	// ConnectTCP lists the TCP ports the process may connect to (the
	// egress proxy's); empty means no network at all.
	ConnectTCP []uint16
	// Own lists directories the process may read (and run from) even
	// inside an excluded one: an MCP server's own install directory in
	// Astrid's home. One that is, contains or resolves to an excluded
	// directory is refused, and nothing beside it in the excluded one is
	// reached: a symlink in it is granted only by what it points to.
	Own []string
}

// access is what a rule grants, before it is cut to what the running
// kernel handles.
type access int

const (
	accessRead access = iota + 1
	accessWrite
	accessDevice
)

// rule is one resolved path and what it grants.
type rule struct {
	path   string
	access access
	dir    bool
}

// Skipped is a path of a policy that was left out, and why.
type Skipped struct {
	Path   string
	Reason string
}

// resolve turns p into rules: each path resolved, those that do not exist
// or lie in an excluded directory skipped, directories that contain an
// excluded one expanded around it.
func (p Policy) resolve() ([]rule, []Skipped, error) {
	var excluded []string
	for _, x := range p.Exclude {
		real, err := filepath.EvalSymlinks(x)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				// A home that does not exist yet is still kept out: by
				// its name, and by its parent's real name.
				real = realParent(x)
			} else {
				return nil, nil, fmt.Errorf("sandbox: exclude %s: %w", x, err)
			}
		}
		excluded = append(excluded, filepath.Clean(x), real)
	}
	var rules []rule
	var skipped []Skipped
	add := func(list []string, a access) error {
		for _, path := range list {
			if !filepath.IsAbs(path) {
				return fmt.Errorf("sandbox: %s is not an absolute path", path)
			}
			real, err := filepath.EvalSymlinks(path)
			if err != nil {
				skipped = append(skipped, Skipped{path, "does not exist"})
				continue
			}
			fi, err := os.Stat(real)
			if err != nil {
				skipped = append(skipped, Skipped{path, err.Error()})
				continue
			}
			if real == "/" {
				// Everything readable is no confinement at all, and the
				// system set already holds what programs need.
				return fmt.Errorf("sandbox: %s grants the whole file system (%s resolves to /); a process is not started with that: grant the directories it needs", accessName(a), path)
			}
			if x, ok := under(real, excluded); ok {
				skipped = append(skipped, Skipped{path, "lies in " + x + ", which no grant reaches"})
				continue
			}
			if !fi.IsDir() || !containsAny(real, excluded) {
				rules = append(rules, rule{path: real, access: a, dir: fi.IsDir()})
				continue
			}
			more, err := expandAround(real, a, excluded)
			if err != nil {
				return err
			}
			rules = append(rules, more...)
		}
		return nil
	}
	if err := add(p.Read, accessRead); err != nil {
		return nil, nil, err
	}
	if err := add(p.Write, accessWrite); err != nil {
		return nil, nil, err
	}
	if err := add(p.Devices, accessDevice); err != nil {
		return nil, nil, err
	}
	for _, path := range p.Own {
		r, err := ownRule(path, excluded)
		if err != nil {
			return nil, nil, err
		}
		rules = append(rules, r)
	}
	return rules, skipped, nil
}

// ownRule grants read of one of Policy.Own: an existing directory, which
// may lie in an excluded one but neither is nor holds one.
func ownRule(path string, excluded []string) (rule, error) {
	if !filepath.IsAbs(path) {
		return rule{}, fmt.Errorf("sandbox: %s is not an absolute path", path)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return rule{}, fmt.Errorf("sandbox: own directory %s: %w", path, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return rule{}, fmt.Errorf("sandbox: own directory %s: %w", path, err)
	}
	if !fi.IsDir() {
		return rule{}, fmt.Errorf("sandbox: own directory %s is not a directory", path)
	}
	if real == "/" || containsAny(real, excluded) || slices.Contains(excluded, real) {
		return rule{}, fmt.Errorf("sandbox: own directory %s (%s) is or holds a directory no grant reaches", path, real)
	}
	return rule{path: real, access: accessRead, dir: true}, nil
}

// expandAround grants dir's entries one by one except the way into an
// excluded directory, descending along that way: a Landlock rule on dir
// would reach everything beneath it. dir itself may only be listed, so
// nothing new can be created at its top (a new file there would be
// beneath the rule of no entry, and a rule on dir would reach the
// excluded one).
func expandAround(dir string, a access, excluded []string) ([]rule, error) {
	rules := []rule{{path: dir, access: accessList, dir: true}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("sandbox: list %s to keep %s out: %w", dir, strings.Join(excluded, ", "), err)
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if _, ok := under(p, excluded); ok {
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 {
			// A link is followed by the OS; it is granted only by what
			// it points to, if that is granted itself.
			continue
		}
		isDir := e.IsDir()
		if isDir && containsAny(p, excluded) {
			more, err := expandAround(p, a, excluded)
			if err != nil {
				return nil, err
			}
			rules = append(rules, more...)
			continue
		}
		rules = append(rules, rule{path: p, access: a, dir: isDir})
	}
	return rules, nil
}

// accessName names a, for errors.
func accessName(a access) string {
	switch a {
	case accessWrite:
		return "fs_write"
	case accessDevice:
		return "[sandbox] devices"
	}
	return "fs_read"
}

// accessList lets a directory be listed and walked, nothing more.
const accessList access = 100

// under reports the excluded directory path lies in (or is), if any.
func under(path string, excluded []string) (string, bool) {
	for _, x := range excluded {
		if path == x || strings.HasPrefix(path, x+"/") || x == "/" {
			return x, true
		}
	}
	return "", false
}

// containsAny reports whether an excluded directory lies strictly
// beneath dir.
func containsAny(dir string, excluded []string) bool {
	return slices.ContainsFunc(excluded, func(x string) bool {
		return dir == "/" && x != "/" || strings.HasPrefix(x, dir+"/")
	})
}

// realParent is x with its deepest existing ancestor resolved.
func realParent(x string) string {
	x = filepath.Clean(x)
	parent, rest := filepath.Dir(x), filepath.Base(x)
	for parent != "/" {
		if real, err := filepath.EvalSymlinks(parent); err == nil {
			return filepath.Join(real, rest)
		}
		rest = filepath.Join(filepath.Base(parent), rest)
		parent = filepath.Dir(parent)
	}
	return x
}
