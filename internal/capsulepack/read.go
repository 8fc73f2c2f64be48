package capsulepack

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/astrid-go/astrid/manifest"
)

// Archive is an archive read and checked by Read: every file is listed in
// Meta with the digest and size it has.
type Archive struct {
	Meta *Meta
	// MetaJSON is meta.json as packed (what a signature covers).
	MetaJSON []byte
	// Files are the packed files by slash path, meta.json and
	// signature.json left out.
	Files map[string][]byte
	// Signature is signature.json as packed; nil when unsigned.
	Signature []byte
}

// Read reads an archive from r, which the caller bounds (a download's
// size). Each entry is checked from its header before its content is read:
// a path that is not local (absolute, "..", a backslash, empty elements),
// anything but a regular file, a name seen before (also when only its case
// differs, or as a directory of another entry), and declared sizes past
// lim are refused. Then meta.json must list every file with its sha256.
func Read(r io.Reader, lim Limits) (*Archive, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	zr.Multistream(false)
	tr := tar.NewReader(zr)
	all := map[string][]byte{}
	folded := map[string]string{}
	var total int64
	for n := 0; ; n++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		if n >= lim.maxFiles() {
			return nil, fmt.Errorf("%w: more than %d entries", ErrTooLarge, lim.maxFiles())
		}
		if err := checkEntry(h); err != nil {
			return nil, err
		}
		if h.Size < 0 || h.Size > lim.maxBytes()-total {
			return nil, fmt.Errorf("%w: %s declares %d bytes, past the %d-byte limit of the archive", ErrTooLarge, h.Name, h.Size, lim.maxBytes())
		}
		if err := checkNew(h.Name, folded); err != nil {
			return nil, err
		}
		// Grown as bytes arrive, so a lying header costs no memory.
		var buf bytes.Buffer
		if _, err := io.Copy(&buf, io.LimitReader(tr, h.Size)); err != nil {
			return nil, fmt.Errorf("%w: read %s: %w", ErrMalformed, h.Name, err)
		}
		if int64(buf.Len()) != h.Size {
			return nil, fmt.Errorf("%w: %s is shorter than its header says", ErrMalformed, h.Name)
		}
		total += h.Size
		all[h.Name] = buf.Bytes()
	}
	return check(all)
}

// checkEntry refuses a header that is not a regular file at a local path.
func checkEntry(h *tar.Header) error {
	name := h.Name
	switch {
	case h.Typeflag != tar.TypeReg:
		return fmt.Errorf("%w: %q is not a regular file (tar type %q); archives hold regular files only", ErrUnsafe, name, h.Typeflag)
	case strings.HasPrefix(name, "/"):
		return fmt.Errorf("%w: %q is an absolute path", ErrUnsafe, name)
	case strings.ContainsAny(name, "\\\x00:"):
		return fmt.Errorf("%w: %q holds a backslash, colon or NUL", ErrUnsafe, name)
	case !fs.ValidPath(name) || name == ".":
		return fmt.Errorf("%w: %q is not a clean path inside the archive (no \"..\", \".\" or empty elements)", ErrUnsafe, name)
	case len(name) > 1024:
		return fmt.Errorf("%w: a path of %d bytes", ErrUnsafe, len(name))
	}
	return nil
}

// checkNew refuses a name already seen, in any case, or one that is a
// directory of a seen file (or the other way round): both would be written
// over each other.
func checkNew(name string, folded map[string]string) error {
	key := strings.ToLower(name)
	if prev, ok := folded[key]; ok {
		return fmt.Errorf("%w: %q appears twice (as %q before)", ErrUnsafe, name, prev)
	}
	for dir := key; ; {
		i := strings.LastIndexByte(dir, '/')
		if i < 0 {
			break
		}
		dir = dir[:i]
		if prev, ok := folded[dir]; ok {
			return fmt.Errorf("%w: %q is inside %q, which is a file", ErrUnsafe, name, prev)
		}
		folded[dir+"/"] = name
	}
	if prev, ok := folded[key+"/"]; ok {
		return fmt.Errorf("%w: %q is a file and the directory of %q", ErrUnsafe, name, prev)
	}
	folded[key] = name
	return nil
}

// check matches the files against meta.json.
func check(all map[string][]byte) (*Archive, error) {
	metaJSON, ok := all[MetaFile]
	if !ok {
		return nil, fmt.Errorf("%w: no %s", ErrMalformed, MetaFile)
	}
	meta, err := parseMeta(metaJSON)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	a := &Archive{Meta: meta, MetaJSON: metaJSON, Files: map[string][]byte{}}
	if sig, ok := all[SignatureFile]; ok {
		a.Signature = sig
	}
	listed := map[string]bool{}
	for _, f := range meta.Files {
		data, ok := all[f.Path]
		if f.Path == MetaFile || f.Path == SignatureFile || !ok || listed[f.Path] {
			return nil, fmt.Errorf("%w: %s lists %q, which the archive does not hold once", ErrDigest, MetaFile, f.Path)
		}
		if got := digest(data); got != f.SHA256 || int64(len(data)) != f.Size {
			return nil, fmt.Errorf("%w: %s is %s (%d bytes), %s says %s (%d bytes); the archive was altered after packing", ErrDigest, f.Path, got, len(data), MetaFile, f.SHA256, f.Size)
		}
		listed[f.Path] = true
		a.Files[f.Path] = data
	}
	for _, name := range slices.Sorted(maps.Keys(all)) {
		if name != MetaFile && name != SignatureFile && !listed[name] {
			return nil, fmt.Errorf("%w: %s is not listed in %s", ErrDigest, name, MetaFile)
		}
	}
	if _, ok := a.Files[manifest.FileName]; !ok {
		return nil, fmt.Errorf("%w: no %s", ErrMalformed, manifest.FileName)
	}
	return a, nil
}

// Extract writes the archive's files, meta.json and signature.json into
// dir, which must exist and be empty; it creates new files only (O_EXCL),
// through an os.Root on dir.
func (a *Archive) Extract(dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("extract: %w", err)
	}
	defer root.Close()
	files := maps.Clone(a.Files)
	files[MetaFile] = a.MetaJSON
	if a.Signature != nil {
		files[SignatureFile] = a.Signature
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if d := filepath.Dir(filepath.FromSlash(name)); d != "." {
			if err := root.MkdirAll(d, 0o700); err != nil {
				return fmt.Errorf("extract %s: %w", name, err)
			}
		}
		f, err := root.OpenFile(filepath.FromSlash(name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return fmt.Errorf("extract %s: %w", name, err)
		}
		_, err = f.Write(files[name])
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("extract %s: %w", name, err)
		}
	}
	return nil
}
