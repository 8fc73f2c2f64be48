package natsbus

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/astrid-go/astrid/internal/atomicfile"
)

// clusterSecretBytes is the randomness of a cluster secret EnsureClusterSecret
// creates; written in hex, it makes twice MinClusterSecretLen characters.
const clusterSecretBytes = 32

// EnsureClusterSecret makes sure path holds a cluster secret only its owner
// may read: an existing file is checked as StartServer will read it (mode
// 0600, at least MinClusterSecretLen bytes) and kept, so that a node
// restarted, and every node reading the same file, presents the same
// secret; a missing one is created from crypto/rand, mode 0600, in a
// directory created 0700. created reports whether this call wrote it.
//
// Two processes creating it at once agree: the file is written whole
// beside path, then linked to it only if no other process got there
// first, and what is kept is whatever path then holds.
func EnsureClusterSecret(path string) (created bool, err error) {
	_, err = readClusterSecret(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, fmt.Errorf("cluster secret %s: %w", path, err)
	}
	info, err := os.Stat(dir)
	if err != nil {
		return false, fmt.Errorf("cluster secret %s: %w", path, err)
	}
	if info.Mode().Perm()&0o022 != 0 {
		return false, fmt.Errorf("cluster secret %s: its directory %s is writable by other users (mode %04o), who could replace the secret; chmod 700 it", path, dir, info.Mode().Perm())
	}
	raw := make([]byte, clusterSecretBytes)
	_, _ = rand.Read(raw) // crypto/rand.Read never fails (Go 1.24+)
	nonce := make([]byte, 8)
	_, _ = rand.Read(nonce)
	tmp := path + ".new-" + hex.EncodeToString(nonce)
	if err := atomicfile.Write(tmp, []byte(hex.EncodeToString(raw)+"\n"), 0o600); err != nil {
		return false, fmt.Errorf("cluster secret %s: %w", path, err)
	}
	defer os.Remove(tmp)
	switch err := os.Link(tmp, path); {
	case err == nil:
		created = true
	case errors.Is(err, fs.ErrExist):
		// Another process created it meanwhile: use theirs.
	default:
		// A file system without hard links: a rename cannot fail for an
		// existing path, so check again first (a race here is as narrow
		// as two daemons starting together on a fresh home).
		if _, statErr := os.Lstat(path); statErr == nil {
			break
		}
		if err := os.Rename(tmp, path); err != nil {
			return false, fmt.Errorf("cluster secret %s: %w", path, err)
		}
		created = true
	}
	if _, err := readClusterSecret(path); err != nil {
		return false, err
	}
	return created, nil
}
