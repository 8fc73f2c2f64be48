package store

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

const keyBytes = 32 // AES-256

// secretsAEAD returns the cipher, loading or creating the key file on first
// use. A failure is not cached, so an operator can fix the file's mode
// without restarting.
func (s *Store) secretsAEAD() (cipher.AEAD, error) {
	s.keyMu.Lock()
	defer s.keyMu.Unlock()
	if s.aead != nil {
		return s.aead, nil
	}
	key, err := loadOrCreateKey(s.keyFile)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	clear(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	s.aead = aead
	return aead, nil
}

func loadOrCreateKey(path string) ([]byte, error) {
	key, err := readKey(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := createKey(path); err != nil {
			return nil, err
		}
		key, err = readKey(path)
	}
	return key, err
}

// readKey reads the key, refusing a file others can read or write (its
// secrecy is the whole point) and a file of the wrong size (truncated or not
// a key at all). The checks use the opened file, not the path, so the file
// checked is the file read.
func readKey(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("store: secrets key %s: %w: %w", path, ErrKeyFile, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("store: secrets key %s: %w: %w", path, ErrKeyFile, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("store: secrets key %s is not a regular file: %w", path, ErrKeyFile)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("store: secrets key %s has mode %04o; it must be private to its owner (chmod 600 %s): %w", path, perm, path, ErrKeyFile)
	}
	if fi.Size() != keyBytes {
		return nil, fmt.Errorf("store: secrets key %s is %d bytes, want %d: %w", path, fi.Size(), keyBytes, ErrKeyFile)
	}
	key := make([]byte, keyBytes)
	if _, err := io.ReadFull(f, key); err != nil {
		return nil, fmt.Errorf("store: secrets key %s: %w: %w", path, ErrKeyFile, err)
	}
	return key, nil
}

// createKey writes a fresh key to a private temporary file and links it into
// place, so no reader ever sees a partial key, and a concurrent creator's key
// wins cleanly (our link then fails with "exists" and we read theirs).
func createKey(path string) error {
	key := make([]byte, keyBytes)
	defer clear(key)
	if _, err := rand.Read(key); err != nil {
		return fmt.Errorf("store: secrets key %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".secrets-key-*")
	if err != nil {
		return fmt.Errorf("store: create secrets key %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("store: create secrets key %s: %w", path, err)
	}
	_, err = tmp.Write(key)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("store: create secrets key %s: %w", path, err)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("store: create secrets key %s: %w", path, err)
	}
	return nil
}
