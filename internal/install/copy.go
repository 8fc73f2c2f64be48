package install

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// copier copies a capsule's files into a staging directory, counting what
// it copies against the install's limits.
type copier struct {
	opts  Options
	files int
	bytes int64
	links []string // symlinks copied, relative to the staging root
}

// tree copies the directory src into dst (which exists): directories,
// regular files and symlinks, skipping .git. A symlink is copied as a link
// and checked once everything is in place (checkLinks): it must lead to
// something inside the capsule. Anything else (a FIFO, a device, a
// socket) is refused.
func (c *copier) tree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		to := filepath.Join(dst, rel)
		switch t := d.Type(); {
		case d.IsDir():
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return os.Mkdir(to, 0o700)
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return fmt.Errorf("read link %s: %w", path, err)
			}
			if err := c.count(path, 0); err != nil {
				return err
			}
			c.links = append(c.links, rel)
			return os.Symlink(target, to)
		case t.IsRegular():
			info, err := d.Info()
			if err != nil {
				return fmt.Errorf("stat %s: %w", path, err)
			}
			return c.file(path, to, info)
		default:
			return fmt.Errorf("%s is not a regular file, directory or symlink (%s): a capsule is installed as files", path, t.Type())
		}
	})
}

// file copies one regular file, keeping its owner's execute bit (an MCP
// server's script may need it) and nothing for group or others, and syncs
// it, so that the rename that installs it never publishes a file a crash
// could leave empty.
func (c *copier) file(from, to string, info fs.FileInfo) (err error) {
	if err := c.count(from, info.Size()); err != nil {
		return err
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600|info.Mode().Perm()&0o100)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	// Copy at most one byte past the size counted, so a file growing
	// while it is copied cannot slip past the limit.
	n, err := io.Copy(out, io.LimitReader(in, info.Size()+1))
	if err != nil {
		return fmt.Errorf("copy %s: %w", from, err)
	}
	if n > info.Size() {
		return fmt.Errorf("copy %s: it grew while it was copied; install again once it is written", from)
	}
	return out.Sync()
}

func (c *copier) count(path string, size int64) error {
	c.files++
	c.bytes += size
	switch {
	case c.files > c.opts.maxFiles():
		return fmt.Errorf("the source has more than %d files (at %s): is it the capsule's directory?", c.opts.maxFiles(), path)
	case c.bytes > c.opts.maxBytes():
		return fmt.Errorf("the source holds more than %d bytes (at %s): is it the capsule's directory?", c.opts.maxBytes(), path)
	}
	return nil
}

// checkLinks refuses a copied symlink that leads out of the staged capsule
// or nowhere: resolved through os.Root, which follows links only while
// they stay inside (a lexical check would be fooled by a link through
// another link).
func (c *copier) checkLinks(dst string) error {
	if len(c.links) == 0 {
		return nil
	}
	root, err := os.OpenRoot(dst)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, rel := range c.links {
		if _, err := root.Stat(rel); err != nil {
			target, _ := os.Readlink(filepath.Join(dst, rel))
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("%s is a symlink to %s, which does not exist in the capsule", rel, target)
			}
			return fmt.Errorf("%s is a symlink to %s, which leads out of the capsule directory: a capsule is installed as its own files (copy what it needs into it)", rel, target)
		}
	}
	return nil
}

// copyFile copies one file given by path (the wasm + Capsule.toml form).
func (c *copier) copyFile(from, to string) error {
	info, err := os.Stat(from)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", from)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		return err
	}
	return c.file(from, to, info)
}
