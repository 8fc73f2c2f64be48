package manifest

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/astrid-go/astrid/internal/capsulefile"
)

func (c *checker) readComponents(top *table, m *Manifest) {
	ids := map[string]int{} // component id → its line
	var links []linkRef
	var firstAt *value
	for _, t := range top.tables("component") {
		if firstAt == nil {
			firstAt = t.v
		}
		var comp Component
		var idAt *value
		comp.ID, idAt = t.str("id")
		if idAt != nil {
			if line, dup := ids[comp.ID]; dup {
				c.errorf(idAt.at, t.keyPath("id"), "component id %q is used twice (first at line %d); give each component its own id", comp.ID, line)
			} else {
				ids[comp.ID] = idAt.at.line
			}
		}
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
		case ComponentLibrary:
			comp.Type = ComponentLibrary
			// Its id is how the components that link it call it.
			if comp.ID == "" {
				c.errorf(tv.at, t.path, "library component %q has no id: the components that link it name it by id (id = \"...\")", comp.File)
			}
		default:
			c.errorf(tv.at, t.keyPath("type"), "unknown component type %q: use \"executable\" (the default) or \"library\"", typ)
		}
		var linkAt []*value
		comp.Link, linkAt = t.strs("link")
		for i, at := range linkAt {
			links = append(links, linkRef{from: len(m.Components), id: comp.Link[i], at: at, key: fmt.Sprintf("%s[%d]", t.keyPath("link"), i)})
		}
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
	if firstAt != nil && allLibraries(m.Components) {
		c.errorf(firstAt.at, "component", "every [[component]] is a library: a capsule needs an executable component (type = \"executable\", the default) to take its calls")
	}
	c.checkLinks(m, links)
}

func allLibraries(cs []Component) bool {
	for _, c := range cs {
		if c.Type != ComponentLibrary {
			return false
		}
	}
	return true
}

// linkRef is one component's link list, checked once every id is known.
type linkRef struct {
	from int // index in m.Components
	id   string
	at   *value
	key  string
}

// checkLinks requires each link that is not an interface name
// ("namespace:name") to name another, library component.
func (c *checker) checkLinks(m *Manifest, links []linkRef) {
	libs := map[string]bool{}
	for _, comp := range m.Components {
		if comp.Type == ComponentLibrary && comp.ID != "" {
			libs[comp.ID] = true
		}
	}
	for _, l := range links {
		switch {
		case strings.Contains(l.id, ":"):
			// A WIT interface ("astrid:session"), as upstream writes
			// link: kept, not interpreted (the capsule's [imports] say
			// what it needs).
		case l.id == m.Components[l.from].ID:
			c.errorf(l.at.at, l.key, "component %q links itself; link names the library components it calls", l.id)
		case !libs[l.id]:
			c.errorf(l.at.at, l.key, "link names %q, which is no library component of this capsule (a [[component]] with id = %q and type = \"library\")", l.id, l.id)
		}
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
