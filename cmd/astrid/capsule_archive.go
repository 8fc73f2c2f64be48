package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/capsulepack"
	"github.com/astrid-go/astrid/internal/publisher"
)

// originFile, in an installed capsule's directory, records where an
// archive install came from; a directory install never carries one (its
// own copy is deleted), so `capsule list` shows only what install wrote.
const originFile = ".astrid-origin.json"

// installOrigin is originFile.
type installOrigin struct {
	// Source is what was installed from, as given.
	Source string `json:"source"`
	// Digest is the sha256 of the archive's bytes (for a registry, of
	// the blob the tag named).
	Digest string `json:"digest"`
	// Signer says who signed it, as capsulepack.Signer prints it; Key is
	// the publisher key, "" when unsigned.
	Signer string `json:"signer"`
	Key    string `json:"key,omitempty"`
}

// allowUnsignedFlag installs an unsigned or unknown-publisher archive
// without asking.
const allowUnsignedFlag = "allow-unsigned"

// isArchiveSource reports whether install's arguments name an archive (a
// .capsule file, a regular file, a registry or a URL) rather than a
// capsule directory.
func isArchiveSource(args []string) bool {
	if len(args) != 1 {
		return false
	}
	a := args[0]
	if strings.HasPrefix(a, "oci://") || strings.HasPrefix(a, "https://") || strings.HasPrefix(a, "http://") || strings.HasSuffix(a, capsulepack.Ext) {
		return true
	}
	fi, err := os.Stat(a)
	return err == nil && fi.Mode().IsRegular() && filepath.Base(a) != "Capsule.toml"
}

// unpacked is an archive read, verified and extracted for staging.
type unpacked struct {
	dir    string
	meta   *capsulepack.Meta
	origin installOrigin
}

// fetchArchive gets an archive's bytes and says where they came from
// (a registry's tag with the digest it resolved to).
func fetchArchive(cmd *cobra.Command, e *installEnv, src string) ([]byte, string, error) {
	if fetch, ok := archiveFetchers(src); ok {
		return fetch(cmd, e, src)
	}
	b, err := readArchiveFile(src)
	return b, src, err
}

// archiveFetcher fetches one kind of remote source.
type archiveFetcher func(*cobra.Command, *installEnv, string) ([]byte, string, error)

// archiveFetchers returns the fetcher of src's scheme, if it has one
// (capsule_remote.go sets it).
var archiveFetchers = func(src string) (archiveFetcher, bool) { return nil, false }

// openArchive fetches, reads and verifies the archive src and extracts it
// into a temporary directory the caller removes. A bad signature is
// refused; an unsigned archive or an unknown publisher's is installed
// only when the person confirms it or --allow-unsigned is given.
func openArchive(cmd *cobra.Command, e *installEnv, src string) (*unpacked, error) {
	b, resolved, err := fetchArchive(cmd, e, src)
	if err != nil {
		return nil, fmt.Errorf("install %s: %w", src, err)
	}
	return openArchiveBytes(cmd, e, src, resolved, b, nil)
}

// openArchiveBytes is openArchive on fetched bytes; resolved is where they
// came from. With wantKey set (a distro lock's signer), the archive must
// be signed by that key ("" in the lock: unsigned).
func openArchiveBytes(cmd *cobra.Command, e *installEnv, src, resolved string, b []byte, wantKey *string) (*unpacked, error) {
	a, err := capsulepack.Read(bytes.NewReader(b), capsulepack.Limits{MaxBytes: e.opts.MaxBytes})
	if err != nil {
		return nil, fmt.Errorf("install %s: refused: %w; nothing was installed", src, err)
	}
	signer, err := a.Verify(publisher.NewTrust(e.st).Lookup)
	if err != nil {
		return nil, fmt.Errorf("install %s: refused: %w; nothing was installed", src, err)
	}
	if wantKey != nil {
		got := ""
		if signer.Signed() {
			got = capsulepack.FormatKey(signer.Key)
		}
		if got != *wantKey {
			return nil, fmt.Errorf("install %s: refused: the lock says it is signed by %q, it is %s; nothing was installed", src, orNone(*wantKey), signer)
		}
	}
	if err := confirmSigner(cmd, src, signer); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "astrid-unpack-")
	if err != nil {
		return nil, fmt.Errorf("install %s: %w", src, err)
	}
	if err := a.Extract(dir); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("install %s: %w", src, err)
	}
	u := &unpacked{dir: dir, meta: a.Meta, origin: installOrigin{Source: resolved, Digest: archiveDigest(b), Signer: signer.String()}}
	if signer.Signed() {
		u.origin.Key = capsulepack.FormatKey(signer.Key)
	}
	return u, nil
}

// confirmSigner lets a trusted signature through, and asks about any other.
func confirmSigner(cmd *cobra.Command, src string, s capsulepack.Signer) error {
	errOut := cmd.ErrOrStderr()
	if s.Trusted() {
		fmt.Fprintf(errOut, "astrid: %s is %s\n", src, s)
		return nil
	}
	if allow, _ := cmd.Flags().GetBool(allowUnsignedFlag); allow {
		fmt.Fprintf(errOut, "astrid: warning: %s is %s; installing it because of --%s\n", src, s, allowUnsignedFlag)
		return nil
	}
	cmd.SilenceErrors = true
	t := terminalOf(cmd)
	if t == nil {
		fmt.Fprintf(errOut, "astrid: not installed: %s is %s, so nothing vouches for who made it; trust its publisher (astrid trust add <name> <key>) or pass --%s\n", src, s, allowUnsignedFlag)
		return exitError{code: 1}
	}
	ok, err := t.confirm(fmt.Sprintf("%s is %s. Install it anyway?", src, s))
	if err != nil {
		return err
	}
	if !ok {
		fmt.Fprintln(errOut, "astrid: not installed; nothing was changed")
		return exitError{code: 1}
	}
	return nil
}

// writeOrigin records o in the staged directory (deleting any copy the
// source brought along); nil only deletes.
func writeOrigin(stagedDir string, o *installOrigin) error {
	p := filepath.Join(stagedDir, originFile)
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("install: %w", err)
	}
	if o == nil {
		return nil
	}
	b, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		return fmt.Errorf("install: record the source: %w", err)
	}
	return nil
}

// readOrigin reads an installed capsule's originFile; ok is false when it
// has none (installed from a directory, or copied in by hand).
func readOrigin(capsuleDir string) (installOrigin, bool) {
	b, err := os.ReadFile(filepath.Join(capsuleDir, originFile))
	if err != nil {
		return installOrigin{}, false
	}
	var o installOrigin
	if json.Unmarshal(b, &o) != nil {
		return installOrigin{}, false
	}
	return o, true
}

func orNone(s string) string {
	if s == "" {
		return "nobody (unsigned)"
	}
	return s
}
