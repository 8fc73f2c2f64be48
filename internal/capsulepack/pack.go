package capsulepack

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/astrid-go/astrid/internal/capsulebuild"
	"github.com/astrid-go/astrid/internal/capsulefile"
	"github.com/astrid-go/astrid/manifest"
)

// Packed is a packed archive and its meta.json.
type Packed struct {
	Bytes []byte
	Meta  *Meta
}

// Pack packs the capsule directory dir (a directory holding Capsule.toml).
// It refuses a manifest with errors, a component that is missing or that
// no hash vouches for (build it first), a selected symlink or special
// file, and more than the default limits. The caller runs `capsule
// check`'s wider report first.
func Pack(dir string) (*Packed, error) {
	m, diags := manifest.Load(dir)
	if m == nil || diags.Err(false) != nil {
		return nil, fmt.Errorf("pack %s: the manifest has errors (see astrid capsule check %s): %w", dir, dir, diags.Err(false))
	}
	build, hasBuild, err := capsulebuild.ReadMeta(dir)
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", dir, err)
	}
	always := map[string]bool{manifest.FileName: true}
	for _, c := range m.Components {
		rel := filepath.ToSlash(filepath.Clean(filepath.FromSlash(c.File)))
		if !fs.ValidPath(rel) {
			return nil, fmt.Errorf("pack %s: component file %q is not a path inside the capsule", dir, c.File)
		}
		always[rel] = true
	}
	sel, err := newSelection(m.Package.Include, m.Package.Exclude, always)
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", dir, err)
	}
	files, err := collect(dir, sel)
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", dir, err)
	}
	meta := &Meta{Format: Format, Name: m.ID(), Version: m.Package.Version}
	if hasBuild {
		meta.WasmHash, meta.File, meta.ABIVersion, meta.Go = build.WasmHash, build.File, build.ABIVersion, build.Go
	}
	for rel := range always {
		if _, ok := files[rel]; !ok {
			return nil, fmt.Errorf("pack %s: %s is missing (build it first: astrid capsule build %s)", dir, rel, dir)
		}
	}
	if exe := m.ExecutableComponent(); exe != nil {
		if err := vouched(exe, meta.WasmHash, files[filepath.ToSlash(filepath.Clean(filepath.FromSlash(exe.File)))]); err != nil {
			return nil, fmt.Errorf("pack %s: %w", dir, err)
		}
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		meta.Files = append(meta.Files, FileDigest{Path: n, SHA256: digest(files[n]), Size: int64(len(files[n]))})
	}
	metaJSON, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return nil, err
	}
	b, err := write(metaJSON, files, nil)
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", dir, err)
	}
	return &Packed{Bytes: b, Meta: meta}, nil
}

// vouched checks the executable component against the hashes that vouch
// for it, as the loader will after install.
func vouched(c *manifest.Component, wasmHash string, data []byte) error {
	got := digest(data)
	if c.Hash == "" && wasmHash == "" {
		return fmt.Errorf("no sha256 vouches for %s (build it with astrid capsule build, which writes meta.json)", c.File)
	}
	for what, want := range map[string]string{"[[component]] hash": c.Hash, "meta.json wasm_hash": wasmHash} {
		if want != "" && want != got {
			return fmt.Errorf("%s of %s is %s, the file's is %s; rebuild it (astrid capsule build)", what, c.File, want, got)
		}
	}
	return nil
}

// collect reads the selected files of dir, keyed by slash path; meta.json
// is left out (Pack writes its own).
func collect(dir string, sel *selection) (map[string][]byte, error) {
	files := map[string][]byte{}
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if rel == MetaFile || rel == SignatureFile {
			return nil
		}
		want, err := sel.wants(rel)
		if err != nil || !want {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file (a symlink or special file); an archive holds regular files only: copy it in or exclude it", rel)
		}
		if len(files) >= DefaultMaxFiles {
			return fmt.Errorf("more than %d files (use [package] include or exclude)", DefaultMaxFiles)
		}
		data, err := capsulefile.Read(dir, filepath.FromSlash(rel), DefaultMaxBytes-total)
		if err != nil {
			return err
		}
		total += int64(len(data))
		files[rel] = data
		return nil
	})
	if err != nil && !errors.Is(err, fs.SkipAll) {
		return nil, err
	}
	return files, nil
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}
