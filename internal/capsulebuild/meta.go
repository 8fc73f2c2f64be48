package capsulebuild

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/astrid-go/astrid/internal/abi"
	"github.com/astrid-go/astrid/internal/capsulefile"
)

// MetaFile is the name of the file beside Capsule.toml that records the
// built module's hash; the wasm engine refuses a module that does not match.
const MetaFile = "meta.json"

// Meta is meta.json.
type Meta struct {
	// WasmHash is "sha256:<hex>" of the executable component.
	WasmHash   string `json:"wasm_hash"`
	File       string `json:"file,omitempty"` // relative to the capsule directory
	ABIVersion int    `json:"abi_version"`
	Go         string `json:"go,omitempty"`
}

// WriteMeta writes meta.json into capsuleDir for the module r.
func WriteMeta(capsuleDir string, r Result) error {
	rel, err := filepath.Rel(capsuleDir, r.Wasm)
	if err != nil {
		rel = filepath.Base(r.Wasm)
	}
	b, err := json.MarshalIndent(Meta{WasmHash: r.SHA256, File: filepath.ToSlash(rel), ABIVersion: abi.Version, Go: runtime.Version()}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(capsuleDir, MetaFile), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", MetaFile, err)
	}
	return nil
}

// maxMetaBytes bounds meta.json (a real one is a few hundred bytes).
const maxMetaBytes = 1 << 20

// ReadMeta reads capsuleDir/meta.json; ok is false when there is none.
func ReadMeta(capsuleDir string) (m Meta, ok bool, err error) {
	// Read as every file of an installed capsule is (capsulefile): a FIFO,
	// a link out of the directory or a huge file is an error, not a hang.
	b, err := capsulefile.Read(capsuleDir, MetaFile, maxMetaBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return Meta{}, false, nil
	}
	if err != nil {
		return Meta{}, false, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return Meta{}, false, fmt.Errorf("%s: %w", filepath.Join(capsuleDir, MetaFile), err)
	}
	return m, true, nil
}
