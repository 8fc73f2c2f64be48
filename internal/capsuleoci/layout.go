package capsuleoci

import (
	"crypto/sha256"
	"encoding/hex"
)

// Media types of a published capsule.
const (
	// ArtifactType is the manifest's artifactType.
	ArtifactType = "application/vnd.astrid.capsule.v1"
	// LayerMediaType is the archive layer's (capsulepack.MediaType; kept
	// here as a constant so this package needs no archive code).
	LayerMediaType = "application/vnd.astrid.capsule.v1.tar+gzip"
	// MaxManifestBytes bounds a fetched manifest.
	MaxManifestBytes = 4 << 20

	// MediaTypeManifest is the OCI image manifest's media type, the only
	// one a capsule is published as.
	MediaTypeManifest = "application/vnd.oci.image.manifest.v1+json"
	// MediaTypeIndex is the OCI image index's (refused, named).
	MediaTypeIndex = "application/vnd.oci.image.index.v1+json"
	// MediaTypeEmpty is the config of an artifact manifest (image-spec
	// 1.1): the two bytes "{}".
	MediaTypeEmpty = "application/vnd.oci.empty.v1+json"

	// annotationCreated is image-spec's creation-time annotation.
	annotationCreated = "org.opencontainers.image.created"
)

// Kind is what an artifact holds: its manifest's artifactType and its
// one layer's media type.
type Kind struct {
	ArtifactType   string
	LayerMediaType string
}

// Kinds of artifact astrid publishes.
var (
	// CapsuleKind is a capsule archive (astrid capsule publish).
	CapsuleKind = Kind{ArtifactType, LayerMediaType}
	// DistroKind is a distro bundle: Distro.lock and every archive it
	// pins, as `astrid distro bundle` writes it (astrid distro publish).
	DistroKind = Kind{"application/vnd.astrid.distro.v1", "application/vnd.astrid.distro.v1.tar"}
)

// emptyConfig is the config blob of an artifact manifest.
var emptyConfig = []byte("{}")

// Descriptor names a blob or manifest by media type, digest and size
// (the subset of image-spec's descriptor a capsule uses).
type Descriptor struct {
	MediaType    string            `json:"mediaType"`
	Digest       string            `json:"digest"`
	Size         int64             `json:"size"`
	ArtifactType string            `json:"artifactType,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
}

// Manifest is an OCI image manifest (image-spec 1.1 fields; the rest of
// a foreign manifest is ignored).
type Manifest struct {
	SchemaVersion int               `json:"schemaVersion"`
	MediaType     string            `json:"mediaType,omitempty"`
	ArtifactType  string            `json:"artifactType,omitempty"`
	Config        Descriptor        `json:"config"`
	Layers        []Descriptor      `json:"layers"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

// DigestOf is b's "sha256:<hex>" digest.
func DigestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// DescriptorOf describes b as a blob of mediaType.
func DescriptorOf(mediaType string, b []byte) Descriptor {
	return Descriptor{MediaType: mediaType, Digest: DigestOf(b), Size: int64(len(b))}
}
