package manifest

import (
	"encoding/hex"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/astrid-go/astrid/internal/capsulefile"
)

func (c *checker) readComponents(top *table, m *Manifest) {
	var firstExec *value
	for _, t := range top.tables("component") {
		var comp Component
		comp.ID, _ = t.str("id")
		var fileAt *value
		if t.has("file") || !t.has("entrypoint") {
			comp.File, fileAt = t.required("file")
			if t.has("entrypoint") {
				v := t.get("entrypoint")
				c.errorf(v.keyAt, t.keyPath("entrypoint"), "%s sets both file and its alias entrypoint; keep file", t)
			}
		} else {
			comp.File, fileAt = t.required("entrypoint")
		}
		if fileAt != nil {
			c.checkRelativeFile(t, "file", comp.File, fileAt)
		}
		typ, tv := t.str("type")
		switch typ {
		case "", ComponentExecutable:
			comp.Type = ComponentExecutable
			if firstExec != nil {
				at := t.v.at
				if tv != nil {
					at = tv.at
				}
				c.errorf(at, t.path, "a capsule has one executable component, and %s is a second (the first is at line %d); mark the others type = \"library\" or split the capsule", t, firstExec.at.line)
			} else {
				firstExec = t.v
			}
		case ComponentLibrary:
			comp.Type = ComponentLibrary
			c.warnf(tv.at, t.keyPath("type"), "library component %q is not loaded by this runtime (only the executable component runs); remove it or link it into the executable", comp.File)
		default:
			c.errorf(tv.at, t.keyPath("type"), "unknown component type %q: use \"executable\" (the default) or \"library\"", typ)
		}
		comp.Link, _ = t.strs("link")
		if h, hv := t.str("hash"); hv != nil {
			if !validHash(h) {
				c.errorf(hv.at, t.keyPath("hash"), "component hash %q is not \"sha256:\" followed by 64 hex digits", h)
			} else {
				comp.Hash = strings.ToLower(h)
			}
		}
		if ct := t.sub("capabilities"); ct != nil {
			comp.Capabilities = c.readCaps(ct)
		}
		t.rest(nil)
		if m.Dir != "" && comp.File != "" {
			comp.Path = filepath.Join(m.Dir, filepath.FromSlash(comp.File))
		}
		m.Components = append(m.Components, comp)
		c.fileRefs = append(c.fileRefs, fileRef{what: "component file", file: comp.File, at: fileAt, key: t.keyPath("file"), hash: comp.Hash})
	}
}

func validHash(h string) bool {
	hexPart, ok := strings.CutPrefix(h, "sha256:")
	if !ok || len(hexPart) != 64 {
		return false
	}
	_, err := hex.DecodeString(hexPart)
	return err == nil
}

// checkRelativeFile requires a path inside the capsule directory: relative
// and without `..`, so nothing a manifest names lies outside the capsule.
func (c *checker) checkRelativeFile(t *table, key, file string, v *value) bool {
	slashed := filepath.ToSlash(file)
	if strings.HasPrefix(slashed, "/") || filepath.IsAbs(file) || filepath.VolumeName(file) != "" {
		c.errorf(v.at, t.keyPath(key), "%s = %q must be relative to the capsule directory", t.keyPath(key), file)
		return false
	}
	for _, part := range strings.Split(slashed, "/") {
		if part == ".." {
			c.errorf(v.at, t.keyPath(key), "%s = %q leaves the capsule directory (`..`); keep the file inside it", t.keyPath(key), file)
			return false
		}
	}
	return true
}

// fileRef is a file the manifest names, checked once the capsule directory
// is known.
type fileRef struct {
	what, file, key, hash string
	at                    *value
}

// checkFiles stats every named file: a missing one is a warning (the capsule
// cannot run until it is built), a hash mismatch an error.
func (c *checker) checkFiles(m *Manifest) {
	for _, r := range c.fileRefs {
		if r.at == nil || r.file == "" {
			continue
		}
		// Through the capsule directory's os.Root, as the loader reads it:
		// a link out of the directory, a FIFO or a device is an error here
		// too, not a file that merely "exists".
		_, err := capsulefile.Stat(m.Dir, r.file)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			c.warnf(r.at.at, r.key, "%s %q does not exist in %s yet; build it before loading the capsule", r.what, r.file, m.Dir)
			continue
		case err != nil:
			c.errorf(r.at.at, r.key, "%s %q cannot be loaded: %v", r.what, r.file, err)
			continue
		}
		if r.hash == "" {
			continue
		}
		got, err := capsulefile.Hash(m.Dir, r.file)
		if err != nil {
			c.errorf(r.at.at, r.key, "%s %q cannot be read to check its hash: %v", r.what, r.file, err)
		} else if got != r.hash {
			c.errorf(r.at.at, r.key, "%s %q has hash %s, but the manifest says %s; rebuild it or update hash", r.what, r.file, got, r.hash)
		}
	}
}
