package distro

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Bundle is an offline bundle read and checked: the lock and every
// archive it pins, keyed by digest.
type Bundle struct {
	Lock     *Lock
	Archives map[string][]byte
}

// ErrBundle wraps every reason ReadBundle refuses a bundle.
var ErrBundle = errors.New("bad distro bundle")

const archivePrefix, archiveSuffix = "capsules/", ".capsule"

// WriteBundle writes lockData and the archives the lock pins (keyed by
// digest) as a tar: Distro.lock first, then capsules/<hex>.capsule in the
// lock's order, every header the same but name and size, so the same
// lock and archives give the same bytes.
func WriteBundle(w io.Writer, lockData []byte, archives map[string][]byte) error {
	l, err := ParseLock(LockName, lockData)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	add := func(name string, b []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(b)), ModTime: time.Unix(0, 0), Format: tar.FormatUSTAR}); err != nil {
			return err
		}
		_, err := tw.Write(b)
		return err
	}
	if err := add(LockName, lockData); err != nil {
		return err
	}
	done := map[string]bool{}
	for _, c := range l.Capsules {
		if done[c.Digest] {
			continue
		}
		b, ok := archives[c.Digest]
		if !ok || digest(b) != c.Digest {
			return fmt.Errorf("bundle: no archive with digest %s for capsule %s", c.Digest, c.Name)
		}
		if err := add(archivePrefix+strings.TrimPrefix(c.Digest, "sha256:")+archiveSuffix, b); err != nil {
			return err
		}
		done[c.Digest] = true
	}
	return tw.Close()
}

// ReadBundle reads a bundle from r: only regular files named Distro.lock
// or capsules/<sha256 hex>.capsule, each once, whose content has the
// digest its name says, at most maxBytes in all; the lock must parse and
// every digest it pins must be there, and nothing else.
func ReadBundle(r io.Reader, maxBytes int64) (*Bundle, error) {
	tr := tar.NewReader(r)
	files := map[string][]byte{}
	var total int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBundle, err)
		}
		if h.Typeflag != tar.TypeReg {
			return nil, fmt.Errorf("%w: %q is not a regular file", ErrBundle, h.Name)
		}
		if h.Name != LockName && !archiveName(h.Name) {
			return nil, fmt.Errorf("%w: unexpected entry %q (a bundle holds %s and %s<sha256>%s only)", ErrBundle, h.Name, LockName, archivePrefix, archiveSuffix)
		}
		if _, dup := files[h.Name]; dup {
			return nil, fmt.Errorf("%w: %q appears twice", ErrBundle, h.Name)
		}
		if h.Size < 0 || h.Size > maxBytes-total {
			return nil, fmt.Errorf("%w: %s declares %d bytes, past the %d-byte limit", ErrBundle, h.Name, h.Size, maxBytes)
		}
		var buf bytes.Buffer
		if n, err := io.Copy(&buf, io.LimitReader(tr, h.Size)); err != nil || n != h.Size {
			return nil, fmt.Errorf("%w: %s is cut short: %v", ErrBundle, h.Name, err)
		}
		total += h.Size
		files[h.Name] = buf.Bytes()
	}
	lockData, ok := files[LockName]
	if !ok {
		return nil, fmt.Errorf("%w: no %s", ErrBundle, LockName)
	}
	l, err := ParseLock(LockName, lockData)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBundle, err)
	}
	b := &Bundle{Lock: l, Archives: map[string][]byte{}}
	for name, data := range files {
		if name == LockName {
			continue
		}
		want := "sha256:" + strings.TrimSuffix(strings.TrimPrefix(name, archivePrefix), archiveSuffix)
		if got := digest(data); got != want {
			return nil, fmt.Errorf("%w: %s has digest %s", ErrBundle, name, got)
		}
		b.Archives[want] = data
	}
	pinned := map[string]bool{}
	for _, c := range l.Capsules {
		pinned[c.Digest] = true
		if _, ok := b.Archives[c.Digest]; !ok {
			return nil, fmt.Errorf("%w: no archive for capsule %s (%s)", ErrBundle, c.Name, c.Digest)
		}
	}
	for d := range b.Archives {
		if !pinned[d] {
			return nil, fmt.Errorf("%w: archive %s is not in the lock", ErrBundle, d)
		}
	}
	return b, nil
}

func archiveName(name string) bool {
	h, ok := strings.CutPrefix(name, archivePrefix)
	if !ok {
		return false
	}
	h, ok = strings.CutSuffix(h, archiveSuffix)
	return ok && validDigest("sha256:"+h)
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}
