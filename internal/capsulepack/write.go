package capsulepack

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"slices"
	"time"
)

// write makes the archive bytes: meta.json, the files in path order, then
// signature.json when sig is not nil. Every header is the same apart from
// name and size (mode 0644, owner 0, time 0), and gzip's header carries no
// time or name, so equal input gives equal bytes.
func write(metaJSON []byte, files map[string][]byte, sig []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	add := func(name string, data []byte) error {
		h := &tar.Header{
			Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(data)),
			ModTime: time.Unix(0, 0), Format: tar.FormatUSTAR,
		}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("pack %s: %w", name, err)
		}
		_, err := tw.Write(data)
		return err
	}
	if err := add(MetaFile, metaJSON); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := add(n, files[n]); err != nil {
			return nil, err
		}
	}
	if sig != nil {
		if err := add(SignatureFile, sig); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
