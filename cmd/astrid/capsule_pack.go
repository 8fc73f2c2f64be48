package main

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/atomicfile"
	"github.com/astrid-go/astrid/internal/capsulepack"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/publisher"
	"github.com/astrid-go/astrid/internal/store"
)

func init() {
	capsuleSubcommands = append(capsuleSubcommands, newCapsulePackCmd, newCapsuleSignCmd)
}

func newCapsulePackCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "pack <dir>",
		Short: "Pack a built capsule into a shareable .capsule archive",
		Long: `pack writes the capsule in <dir> to one archive another machine installs with
` + "`astrid capsule install <file.capsule>`" + `. The archive holds Capsule.toml, the built components,
the files [package] include names (without include: every file but hidden ones, Go sources
and earlier archives; [package] exclude removes more) and meta.json with each file's sha256.

It refuses what ` + "`astrid capsule check`" + ` refuses, a component that is not built or whose
meta.json hash is stale (run ` + "`astrid capsule build`" + ` first), and symlinks. The same files give
the same bytes: times, owners and modes are not recorded. Sign it with ` + "`astrid capsule sign`" + `.`,
		Example: `  astrid capsule build examples/hello && astrid capsule pack examples/hello
  astrid capsule pack examples/hello -o /tmp/hello.capsule`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if report := newCheckReport(dir, false); !report.Loads {
				report.writeText(cmd.OutOrStdout())
				fmt.Fprintln(cmd.ErrOrStderr(), "astrid: not packed: the capsule does not load (see the report above)")
				cmd.SilenceErrors = true
				return exitError{code: 1}
			}
			p, err := capsulepack.Pack(dir)
			if err != nil {
				return err
			}
			if out == "" {
				out = p.Meta.Name + "-" + p.Meta.Version + capsulepack.Ext
			}
			if err := atomicfile.Write(out, p.Bytes, 0o644); err != nil {
				return fmt.Errorf("capsule pack: %w", err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "astrid: packed %s %s into %s (%d files, %d bytes, %s)\n",
				p.Meta.Name, p.Meta.Version, out, len(p.Meta.Files), len(p.Bytes), archiveDigest(p.Bytes))
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "archive to write (default <name>-<version>.capsule in the current directory)")
	return cmd
}

func newCapsuleSignCmd() *cobra.Command {
	var key, out string
	cmd := &cobra.Command{
		Use:   "sign <file.capsule>",
		Short: "Sign a capsule archive with your publisher key",
		Long: `sign adds your ed25519 publisher signature (from ` + "`astrid key generate`" + `) to the archive,
replacing any earlier one; it covers meta.json, which holds every file's sha256. Whoever
installs it trusts your key first: ` + "`astrid trust add <name> <key>`" + ` with the key ` + "`astrid key show`" + `
prints. The archive is rewritten in place unless -o names another file.`,
		Example: `  astrid key generate
  astrid capsule sign hello-0.1.0.capsule`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := readArchiveFile(args[0])
			if err != nil {
				return err
			}
			return withHomeStore(func(st *store.Store) error {
				priv, err := publisher.Load(st, key)
				if err != nil {
					return err
				}
				signed, err := capsulepack.Sign(b, priv)
				if err != nil {
					return fmt.Errorf("%s: %w", args[0], err)
				}
				if out == "" {
					out = args[0]
				}
				if err := atomicfile.Write(out, signed, 0o644); err != nil {
					return fmt.Errorf("capsule sign: %w", err)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "astrid: signed %s with publisher key %s (%s)\n", out, key, capsulepack.KeyID(priv.Public().(ed25519.PublicKey)))
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&key, "key", publisher.DefaultKey, "name of the publisher key to sign with")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the signed archive here instead of over the input")
	return cmd
}

// readArchiveFile reads a local archive, bounded by the archive limit.
func readArchiveFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Size() > capsulepack.DefaultMaxBytes {
		return nil, fmt.Errorf("%s is %d bytes, past the %d-byte archive limit", path, fi.Size(), capsulepack.DefaultMaxBytes)
	}
	b := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, nil
}

// archiveDigest is "sha256:<hex>" of an archive's bytes (what a registry
// calls its digest).
func archiveDigest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// withHomeStore runs fn with $ASTRID_HOME's state database open.
func withHomeStore(fn func(*store.Store) error) (err error) {
	home, err := config.Home()
	if err != nil {
		return err
	}
	st, err := openStore(home)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := st.Close(); err == nil {
			err = cerr
		}
	}()
	return fn(st)
}
