package capsulepack

import (
	"encoding/json"
	"fmt"
)

// Format names this archive layout in meta.json; Read refuses another.
const Format = "astrid-capsule/1"

// Names of the archive's own files.
const (
	MetaFile      = "meta.json"
	SignatureFile = "signature.json"
	// Ext is the archive's file name extension.
	Ext = ".capsule"
	// MediaType is the archive's media type (an OCI layer's, a download's).
	MediaType = "application/vnd.astrid.capsule.v1.tar+gzip"
)

// Meta is the archive's meta.json. Its first fields are the build record
// (internal/capsulebuild.Meta) so that an installed capsule's loader still
// finds wasm_hash there; Files lists every other file of the archive.
type Meta struct {
	WasmHash   string `json:"wasm_hash,omitempty"`
	File       string `json:"file,omitempty"`
	ABIVersion int    `json:"abi_version,omitempty"`
	Go         string `json:"go,omitempty"`

	Format  string `json:"format"`
	Name    string `json:"name"`
	Version string `json:"version"`
	// Files are every file of the archive but meta.json and
	// signature.json, in path order.
	Files []FileDigest `json:"files"`
}

// FileDigest is one packed file: its slash path, "sha256:<hex>" and size.
type FileDigest struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// parseMeta reads meta.json as packed.
func parseMeta(b []byte) (*Meta, error) {
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", MetaFile, err)
	}
	if m.Format != Format {
		return nil, fmt.Errorf("%s: format %q is not %q (packed by another tool or a newer astrid?)", MetaFile, m.Format, Format)
	}
	if m.Name == "" || m.Version == "" {
		return nil, fmt.Errorf("%s: name and version are required", MetaFile)
	}
	return &m, nil
}
