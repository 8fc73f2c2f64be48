package capsuleoci

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
)

// Errors Fetch wraps.
var (
	// ErrMediaType: the reference names another kind of artifact than asked.
	ErrMediaType = errors.New("not the kind of artifact asked for")
	// ErrTooLarge: the layer is past the caller's bound.
	ErrTooLarge = errors.New("capsule layer too large")
	// ErrDigestMismatch: bytes the registry served are not the ones named.
	ErrDigestMismatch = errors.New("digest mismatch")
	// ErrNotFound: the registry has no such tag, digest or blob.
	ErrNotFound = errors.New("not found")
)

// Client publishes and fetches capsules over the OCI distribution API
// (oras-go's remote.Repository).
type Client struct {
	// HTTP makes every request (required): the egress client.
	HTTP *http.Client
	// Credential finds the credential of a registry ("host:port"); nil:
	// anonymous.
	Credential CredentialFunc
	// PlainHTTP reports whether a registry is spoken to over plain HTTP
	// (nil: never).
	PlainHTTP func(registry string) bool

	cacheOnce sync.Once
	cache     auth.Cache
}

// repo is ref's repository, every request through c's auth client, only
// OCI image manifests asked for and a manifest read bounded.
func (c *Client) repo(ref Ref) (*remote.Repository, error) {
	ac, err := c.authClient()
	if err != nil {
		return nil, err
	}
	repo, err := remote.NewRepository(ref.Registry + "/" + ref.Repository)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	repo.Client = ac
	repo.PlainHTTP = c.PlainHTTP != nil && c.PlainHTTP(ref.Registry)
	repo.ManifestMediaTypes = []string{MediaTypeManifest}
	repo.MaxMetadataBytes = MaxManifestBytes
	return repo, nil
}

// Published is what Push stored.
type Published struct {
	// Manifest is the manifest's descriptor (its digest is what
	// `install oci://…@digest` pins).
	Manifest Descriptor
	// Layer is the archive blob's.
	Layer Descriptor
}

// Push uploads archive as a capsule artifact and tags it ref.Tag (a ref
// with only a digest is refused: the digest is the result, not an input).
// annotations go on the manifest (name, version: org.opencontainers.*).
func (c *Client) Push(ctx context.Context, ref Ref, archive []byte, annotations map[string]string) (Published, error) {
	return c.PushArtifact(ctx, ref, CapsuleKind, archive, annotations)
}

// PushArtifact is Push for an artifact of any kind.
func (c *Client) PushArtifact(ctx context.Context, ref Ref, kind Kind, archive []byte, annotations map[string]string) (Published, error) {
	if ref.Tag == "" || ref.Digest != "" {
		return Published{}, fmt.Errorf("publish to %s: give a tag (oci://host/name:tag), not a digest", ref)
	}
	repo, err := c.repo(ref)
	if err != nil {
		return Published{}, fmt.Errorf("publish to %s: %w", ref, err)
	}
	layer := DescriptorOf(kind.LayerMediaType, archive)
	config := DescriptorOf(MediaTypeEmpty, emptyConfig)
	for _, b := range []struct {
		d    Descriptor
		data []byte
	}{{config, emptyConfig}, {layer, archive}} {
		if err := pushIfMissing(ctx, repo, b.d.oci(), b.data); err != nil {
			return Published{}, fmt.Errorf("publish to %s: upload %s: %w", ref, b.d.Digest, classify(err, ref.Registry))
		}
	}
	ann := map[string]string{}
	for k, v := range annotations {
		ann[k] = v
	}
	// A fixed creation time keeps the manifest reproducible: the same
	// archive gives the same manifest digest.
	ann[annotationCreated] = "1970-01-01T00:00:00Z"
	raw, err := json.Marshal(Manifest{
		SchemaVersion: 2, MediaType: MediaTypeManifest, ArtifactType: kind.ArtifactType,
		Config: config, Layers: []Descriptor{layer}, Annotations: ann,
	})
	if err != nil {
		return Published{}, err
	}
	man := DescriptorOf(MediaTypeManifest, raw)
	// oras checks the digest the registry says it stored against man's.
	if err := repo.PushReference(ctx, man.oci(), bytes.NewReader(raw), ref.Tag); err != nil {
		return Published{}, fmt.Errorf("publish to %s: push the manifest: %w", ref, classify(err, ref.Registry))
	}
	return Published{Manifest: man, Layer: layer}, nil
}

// pushIfMissing uploads b unless the repository has it.
func pushIfMissing(ctx context.Context, repo *remote.Repository, desc ocispec.Descriptor, b []byte) error {
	if ok, err := repo.Exists(ctx, desc); err == nil && ok {
		return nil
	}
	return repo.Push(ctx, desc, bytes.NewReader(b))
}

// Fetched is a capsule fetched and checked.
type Fetched struct {
	Archive  []byte
	Manifest Descriptor
	Layer    Descriptor
}

// Fetch resolves ref and downloads its archive. The manifest must be an
// OCI image manifest of ArtifactType (or whose only layer is a capsule),
// at most MaxManifestBytes, matching the digest the registry gave (or
// ref.Digest); its one layer must be LayerMediaType, at most maxBytes, and
// match the manifest's digest and size. Nothing is returned unless all
// of that holds.
func (c *Client) Fetch(ctx context.Context, ref Ref, maxBytes int64) (Fetched, error) {
	return c.FetchArtifact(ctx, ref, CapsuleKind, maxBytes)
}

// FetchArtifact is Fetch for an artifact of kind: its manifest must be of
// kind's artifact type (or none) and its one layer of kind's media type.
func (c *Client) FetchArtifact(ctx context.Context, ref Ref, kind Kind, maxBytes int64) (Fetched, error) {
	repo, err := c.repo(ref)
	if err != nil {
		return Fetched{}, fmt.Errorf("fetch %s: %w", ref, err)
	}
	raw, desc, err := fetchManifest(ctx, repo, ref)
	if err != nil {
		return Fetched{}, fmt.Errorf("fetch %s: %w", ref, err)
	}
	layer, err := artifactLayer(raw, kind)
	if err != nil {
		return Fetched{}, fmt.Errorf("fetch %s: %w", ref, err)
	}
	if layer.Size < 0 || layer.Size > maxBytes {
		return Fetched{}, fmt.Errorf("fetch %s: %w: the archive is %d bytes, past %d", ref, ErrTooLarge, layer.Size, maxBytes)
	}
	archive, err := fetchBlob(ctx, repo, layer.oci())
	if err != nil {
		return Fetched{}, fmt.Errorf("fetch %s: archive %s: %w", ref, layer.Digest, classify(err, ref.Registry))
	}
	return Fetched{Archive: archive, Manifest: desc, Layer: layer}, nil
}

// fetchManifest fetches ref's manifest: of the digest asked for (or the
// registry's Docker-Content-Digest, which oras-go takes for the
// descriptor and content.ReadAll holds the bytes to), an OCI image
// manifest, at most MaxManifestBytes.
func fetchManifest(ctx context.Context, repo *remote.Repository, ref Ref) ([]byte, Descriptor, error) {
	d, rc, err := repo.FetchReference(ctx, ref.reference())
	if err != nil {
		return nil, Descriptor{}, classify(err, ref.Registry)
	}
	defer rc.Close()
	desc := Descriptor{MediaType: d.MediaType, Digest: d.Digest.String(), Size: d.Size}
	if ref.Digest != "" && desc.Digest != ref.Digest {
		return nil, Descriptor{}, fmt.Errorf("the registry answered with manifest %s, not the digest asked for: %w", desc.Digest, ErrDigestMismatch)
	}
	if desc.MediaType != MediaTypeManifest {
		return nil, Descriptor{}, fmt.Errorf("%w: the manifest's media type is %q, want %q", ErrMediaType, desc.MediaType, MediaTypeManifest)
	}
	if desc.Size < 0 || desc.Size > MaxManifestBytes {
		return nil, Descriptor{}, fmt.Errorf("the manifest is %d bytes, past %d: %w", desc.Size, MaxManifestBytes, ErrTooLarge)
	}
	raw, err := content.ReadAll(io.LimitReader(rc, desc.Size+1), d)
	if err != nil {
		return nil, Descriptor{}, fmt.Errorf("manifest %s: %w", desc.Digest, classify(err, ref.Registry))
	}
	return raw, desc, nil
}

// fetchBlob downloads desc (its size already bounded by the caller),
// reading at most desc.Size+1 bytes and checking size and digest.
func fetchBlob(ctx context.Context, repo *remote.Repository, desc ocispec.Descriptor) ([]byte, error) {
	rc, err := repo.Blobs().Fetch(ctx, desc)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return content.ReadAll(io.LimitReader(rc, desc.Size+1), desc)
}

// artifactLayer checks a manifest's layout and returns its one layer.
func artifactLayer(raw []byte, kind Kind) (Descriptor, error) {
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return Descriptor{}, fmt.Errorf("%w: manifest: %w", ErrMediaType, err)
	}
	if m.MediaType != "" && m.MediaType != MediaTypeManifest {
		return Descriptor{}, fmt.Errorf("%w: the manifest says it is %q", ErrMediaType, m.MediaType)
	}
	if m.ArtifactType != "" && m.ArtifactType != kind.ArtifactType {
		return Descriptor{}, fmt.Errorf("%w: artifact type %q, want %q", ErrMediaType, m.ArtifactType, kind.ArtifactType)
	}
	if len(m.Layers) != 1 || m.Layers[0].MediaType != kind.LayerMediaType {
		types := make([]string, len(m.Layers))
		for i, l := range m.Layers {
			types[i] = l.MediaType
		}
		return Descriptor{}, fmt.Errorf("%w: want one layer of %s, the manifest has %q", ErrMediaType, kind.LayerMediaType, types)
	}
	if !ValidDigest(m.Layers[0].Digest) {
		return Descriptor{}, fmt.Errorf("%w: the layer's digest %q is not sha256:<hex>", ErrMediaType, m.Layers[0].Digest)
	}
	return m.Layers[0], nil
}

// oci is d as image-spec's descriptor (what oras-go takes).
func (d Descriptor) oci() ocispec.Descriptor {
	return ocispec.Descriptor{MediaType: d.MediaType, Digest: digest.Digest(d.Digest), Size: d.Size, ArtifactType: d.ArtifactType, Annotations: d.Annotations}
}
