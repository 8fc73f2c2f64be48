package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/atomicfile"
	"github.com/astrid-go/astrid/internal/capsuleoci"
	"github.com/astrid-go/astrid/internal/capsulepack"
	"github.com/astrid-go/astrid/internal/distro"
	"github.com/astrid-go/astrid/internal/install"
	"github.com/astrid-go/astrid/internal/publisher"
	"github.com/astrid-go/astrid/manifest"
)

func newDistroCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "distro",
		Short: "Sets of capsules installed together: Distro.toml, Distro.lock, offline bundles",
		Long: `A Distro.toml names capsules, each with a version requirement and a source:

  [distro]
  name = "my-agent"
  version = "0.1.0"

  [[capsule]]
  name = "hello"
  version = "^0.1"
  source = "oci://registry.example/astrid/hello:0.1.0"   # or https://…, or a .capsule file

` + "`astrid distro lock`" + ` fetches each, checks it (digests, signature, name, version) and writes
Distro.lock with the exact source, the archive's sha256 and its signer. ` + "`astrid distro apply`" + `
installs exactly the lock: every archive is fetched and checked against it before the first
is installed. ` + "`astrid distro bundle`" + ` puts the lock and its archives in one file that
` + "`astrid distro apply --bundle`" + ` installs from with no network; ` + "`astrid distro publish`" + ` puts that
bundle in an OCI registry, from which ` + "`astrid init --distro oci://…`" + ` sets up a home.`,
	}
	cmd.AddCommand(newDistroLockCmd(), newDistroApplyCmd(), newDistroBundleCmd(), newDistroPublishCmd())
	return cmd
}

// hasScheme reports whether src is a registry or a URL, not a file.
func hasScheme(src string) bool {
	return strings.HasPrefix(src, ociScheme) || strings.HasPrefix(src, "https://") || strings.HasPrefix(src, "http://")
}

// sourceFrom resolves a file source relative to the directory of the
// Distro.toml or Distro.lock that names it.
func sourceFrom(base, src string) string {
	if hasScheme(src) || filepath.IsAbs(src) {
		return src
	}
	return filepath.Join(filepath.Dir(base), src)
}

func newDistroLockCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "lock [Distro.toml]",
		Short: "Resolve Distro.toml into Distro.lock: exact sources, digests and signers",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := distro.FileName
			if len(args) == 1 {
				path = args[0]
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			d, err := distro.Parse(path, data)
			if err != nil {
				return err
			}
			if out == "" {
				out = filepath.Join(filepath.Dir(path), distro.LockName)
			}
			lock := &distro.Lock{Distro: d.Distro}
			err = withInstallEnv(func(e *installEnv) error {
				trust := publisher.NewTrust(e.st)
				for _, c := range d.Capsules {
					b, resolved, err := fetchArchive(cmd, e, sourceFrom(path, c.Source))
					if err != nil {
						return fmt.Errorf("capsule %s: %w", c.Name, err)
					}
					a, err := capsulepack.Read(bytes.NewReader(b), capsulepack.Limits{MaxBytes: maxArchiveBytes(e)})
					if err != nil {
						return fmt.Errorf("capsule %s (%s): %w", c.Name, c.Source, err)
					}
					signer, err := a.Verify(trust.Lookup)
					if err != nil {
						return fmt.Errorf("capsule %s (%s): %w", c.Name, c.Source, err)
					}
					if a.Meta.Name != c.Name {
						return fmt.Errorf("capsule %s: %s holds capsule %s", c.Name, c.Source, a.Meta.Name)
					}
					if err := checkVersion(c, a.Meta.Version); err != nil {
						return err
					}
					l := distro.Locked{Name: c.Name, Version: a.Meta.Version, Source: c.Source, Digest: archiveDigest(b)}
					if hasScheme(c.Source) {
						l.Source = resolved
					}
					if signer.Signed() {
						l.Signer = capsulepack.FormatKey(signer.Key)
					}
					lock.Capsules = append(lock.Capsules, l)
					fmt.Fprintf(cmd.ErrOrStderr(), "astrid: locked %s %s %s, %s\n", c.Name, a.Meta.Version, shortDigest(l.Digest), signer)
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("distro lock: %w; %s not written", err, out)
			}
			b, err := lock.Marshal()
			if err != nil {
				return err
			}
			if err := atomicfile.Write(out, b, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "astrid: wrote %s (%d capsules)\n", out, len(lock.Capsules))
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "lock file to write (default Distro.lock beside Distro.toml)")
	return cmd
}

// checkVersion holds an archive's version to the distro's requirement.
func checkVersion(c distro.Capsule, version string) error {
	if c.Version == "" {
		return nil
	}
	req, err := manifest.ParseRequirement(c.Version)
	if err != nil {
		return fmt.Errorf("capsule %s: version %q: %w", c.Name, c.Version, err)
	}
	v, err := manifest.ParseVersion(version)
	if err != nil {
		return fmt.Errorf("capsule %s: its version %q: %w", c.Name, version, err)
	}
	if !req.Matches(v) {
		return fmt.Errorf("capsule %s: %s is version %s, which does not satisfy %q", c.Name, c.Source, version, c.Version)
	}
	return nil
}

// lockedArchives gets every archive a lock pins, from the bundle or from
// their sources, and refuses any whose bytes are not the locked digest:
// nothing is installed unless all of them match.
func lockedArchives(cmd *cobra.Command, e *installEnv, lockPath string, l *distro.Lock, bundle *distro.Bundle) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, c := range l.Capsules {
		var b []byte
		if bundle != nil {
			b = bundle.Archives[c.Digest]
		} else {
			var err error
			if b, _, err = fetchArchive(cmd, e, sourceFrom(lockPath, c.Source)); err != nil {
				return nil, fmt.Errorf("capsule %s: %w", c.Name, err)
			}
		}
		if got := archiveDigest(b); got != c.Digest {
			return nil, fmt.Errorf("capsule %s: the lock pins %s, but %s now gives %s; nothing was installed (run astrid distro lock again if the change is expected)", c.Name, c.Digest, c.Source, got)
		}
		out[c.Name] = b
	}
	return out, nil
}

func newDistroApplyCmd() *cobra.Command {
	var yes, offline bool
	var bundlePath string
	cmd := &cobra.Command{
		Use:   "apply [Distro.lock|oci://host/namespace/name:tag]",
		Short: "Install exactly what Distro.lock pins (or an offline bundle holds)",
		Long: `apply fetches every archive the lock pins (or takes it from --bundle, with no network) and
checks each against the lock: its sha256, then its files' digests, its signature and that the
signer is the one locked. Only when all of them pass does it stage them all and show each as
` + "`astrid capsule install`" + ` does: the report with every grant and its risk, confirmation (or
--yes, and --accept-risk for high-risk grants). Then it installs all of them or none: a capsule
declined, or any failure, leaves the home as it was (capsules placed before it are put back,
with their approvals). A publisher not in your trust store is asked about (or needs
--allow-unsigned) as for any install.`,
		Example: `  astrid distro apply Distro.lock --yes
  astrid distro apply oci://registry.example/astrid/my-agent:1.0.0 --yes
  astrid distro apply --bundle my-agent.distro.tar --yes --allow-unsigned`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			lockPath := distro.LockName
			if len(args) == 1 {
				lockPath = args[0]
			}
			if strings.HasPrefix(lockPath, ociScheme) {
				if offline || bundlePath != "" {
					return errors.New("distro apply oci://… fetches a published distro: it takes neither --offline nor --bundle")
				}
				return applyDistro(cmd, "", lockPath, yes)
			}
			if offline && bundlePath == "" {
				return errors.New("distro apply --offline installs from a bundle: give --bundle <file> (made by astrid distro bundle)")
			}
			return applyDistro(cmd, lockPath, bundlePath, yes)
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "install without asking (you reviewed the grants)")
	cmd.Flags().Bool(acceptRiskFlag, false, "with --yes, also accept high-risk grants")
	cmd.Flags().Bool(allowUnsignedFlag, false, "install archives that are unsigned or from publishers not in the trust store without asking")
	cmd.Flags().StringVar(&bundlePath, "bundle", "", "install from this bundle (astrid distro bundle), with no network")
	cmd.Flags().BoolVar(&offline, "offline", false, "refuse to use the network (needs --bundle)")
	return cmd
}

func newDistroBundleCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "bundle [Distro.lock]",
		Short: "Put Distro.lock and every archive it pins into one file for offline apply",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			lockPath := distro.LockName
			if len(args) == 1 {
				lockPath = args[0]
			}
			return withInstallEnv(func(e *installEnv) error {
				b, lock, err := bundleLock(cmd, e, lockPath)
				if err != nil {
					return err
				}
				if out == "" {
					out = lock.Distro.Name + ".distro.tar"
				}
				if err := atomicfile.Write(out, b, 0o644); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "astrid: wrote %s (%d capsules, %d bytes); install it with astrid distro apply --bundle %s\n", out, len(lock.Capsules), len(b), out)
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "bundle to write (default <distro name>.distro.tar)")
	return cmd
}

// applyDistro installs what the lock at lockPath pins, or what the bundle
// at bundlePath holds when it is not "" (a file, or a bundle published
// to a registry: oci://…).
func applyDistro(cmd *cobra.Command, lockPath, bundlePath string, yes bool) error {
	return withInstallEnv(func(e *installEnv) error {
		var bundle *distro.Bundle
		var lock *distro.Lock
		if bundlePath != "" {
			var err error
			if bundle, err = openBundle(cmd, e, bundlePath); err != nil {
				return err
			}
			lock = bundle.Lock
		} else {
			data, err := os.ReadFile(lockPath)
			if err != nil {
				return err
			}
			if lock, err = distro.ParseLock(lockPath, data); err != nil {
				return err
			}
		}
		archives, err := lockedArchives(cmd, e, lockPath, lock, bundle)
		if err != nil {
			return err
		}
		var ready []*unpacked
		defer func() {
			for _, u := range ready {
				_ = os.RemoveAll(u.dir)
			}
		}()
		for _, c := range lock.Capsules {
			signer := c.Signer
			u, err := openArchiveBytes(cmd, e, c.Name+" ("+c.Source+")", c.Source, archives[c.Name], &signer)
			if err != nil {
				return err
			}
			ready = append(ready, u)
		}
		showDistro(cmd, lock, ready)
		srcs := make([][]string, len(ready))
		for i, u := range ready {
			srcs[i] = []string{u.dir}
		}
		set, err := install.StageSet(e.opts, srcs...)
		if err != nil {
			return fmt.Errorf("distro %s: %w; nothing was installed", lock.Distro.Name, err)
		}
		defer set.Abort()
		for i, c := range lock.Capsules {
			ok, err := reviewStaged(cmd, e, []string{c.Source}, ready[i], set.Staged[i], yes)
			if err == nil && !ok {
				err = errors.New("declined")
			}
			if err != nil {
				if errors.As(err, new(exitError)) {
					// The reason is printed already.
					fmt.Fprintf(cmd.ErrOrStderr(), "astrid: distro %s: stopped at capsule %s; nothing was installed\n", lock.Distro.Name, c.Name)
					return err
				}
				return fmt.Errorf("distro %s: capsule %s: %w; nothing was installed", lock.Distro.Name, c.Name, err)
			}
		}
		// Env values are asked for once every capsule is confirmed, so
		// that none is kept for a capsule a later refusal leaves out.
		missing := make([][]string, len(ready))
		for i, s := range set.Staged {
			if missing[i], err = askEnv(cmd, e.st, s.Manifest, yes); err != nil {
				return fmt.Errorf("distro %s: %w; nothing was installed", lock.Distro.Name, err)
			}
		}
		if err := set.Commit(e.st); err != nil {
			return fmt.Errorf("distro %s: %w", lock.Distro.Name, err)
		}
		for i, s := range set.Staged {
			installed(cmd, s, missing[i])
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "astrid: distro %s %s applied: %d capsules\n", lock.Distro.Name, lock.Distro.Version, len(lock.Capsules))
		var loadErr error
		for _, s := range set.Staged {
			if err := daemonLoaded(cmd, e.home, s.Manifest.ID()); err != nil {
				loadErr = err
			}
		}
		return loadErr
	})
}

// showDistro lists, before anything is installed, every capsule of the
// lock with who signed it and its high-risk grants, so the whole set is
// seen once before each install's own report and question.
func showDistro(cmd *cobra.Command, lock *distro.Lock, ready []*unpacked) {
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "distro %s %s: %d capsules, every one checked against the lock\n", lock.Distro.Name, lock.Distro.Version, len(lock.Capsules))
	for i, c := range lock.Capsules {
		risk := "no high-risk grants"
		if m, _ := manifest.Load(ready[i].dir); m != nil {
			if high := m.Capabilities.HighRisks(); len(high) > 0 {
				grants := make([]string, len(high))
				for j, r := range high {
					grants[j] = r.Grant
				}
				risk = "HIGH RISK: " + strings.Join(grants, ", ")
			}
		}
		fmt.Fprintf(out, "  %-24s %-10s %s; %s\n", c.Name, c.Version, ready[i].origin.Signer, risk)
	}
	fmt.Fprintln(out)
}

// maxBundleBytes bounds a distro bundle read or fetched.
const maxBundleBytes = 4 * capsulepack.DefaultMaxBytes

// openBundle reads the bundle at src: a file, or oci://… (a bundle
// published by astrid distro publish, its digests checked as a
// capsule's are).
func openBundle(cmd *cobra.Command, e *installEnv, src string) (*distro.Bundle, error) {
	var r io.Reader
	if strings.HasPrefix(src, ociScheme) {
		ref, err := capsuleoci.ParseRef(src)
		if err != nil {
			return nil, err
		}
		c, err := ociClient(e.home, e.st, ref.Registry)
		if err != nil {
			return nil, err
		}
		defer c.HTTP.CloseIdleConnections()
		f, err := c.FetchArtifact(cmd.Context(), ref, capsuleoci.DistroKind, maxBundleBytes)
		if err != nil {
			return nil, ociError(err)
		}
		ref.Digest = f.Manifest.Digest
		fmt.Fprintf(cmd.ErrOrStderr(), "astrid: fetched distro %s (bundle %d bytes)\n", ref, len(f.Archive))
		r = bytes.NewReader(f.Archive)
	} else {
		f, err := os.Open(src)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	b, err := distro.ReadBundle(r, maxBundleBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	return b, nil
}

func newDistroPublishCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "publish <Distro.lock|bundle.tar> oci://host/namespace/name:tag",
		Short: "Publish a distro (its lock and every archive, as one bundle) to an OCI registry",
		Long: `publish uploads a distro bundle to an OCI registry as an artifact of type
application/vnd.astrid.distro.v1 with one layer, the bundle (what ` + "`astrid distro bundle`" + ` writes:
Distro.lock and every archive it pins). Given a Distro.lock, it makes the bundle first, fetching
and checking every archive against the lock. It prints the reference with the manifest's digest.

` + "`astrid init --distro oci://…`" + ` and ` + "`astrid distro apply oci://…`" + ` fetch it and install it as
from a bundle file: every archive checked against the lock, all or nothing. Credentials and
hosts as for ` + "`astrid capsule publish`" + `.`,
		Example: `  astrid distro publish Distro.lock oci://localhost:5000/astrid/my-agent:1.0.0
  ASTRID_HOME=/srv/agent astrid init --distro oci://localhost:5000/astrid/my-agent:1.0.0 --yes`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, err := capsuleoci.ParseRef(args[1])
			if err != nil {
				return err
			}
			return withInstallEnv(func(e *installEnv) error {
				var data []byte
				var lock *distro.Lock
				if strings.HasSuffix(args[0], ".tar") {
					b, err := openBundle(cmd, e, args[0])
					if err != nil {
						return err
					}
					if data, err = os.ReadFile(args[0]); err != nil {
						return err
					}
					lock = b.Lock
				} else {
					var err error
					if data, lock, err = bundleLock(cmd, e, args[0]); err != nil {
						return err
					}
				}
				c, err := ociClient(e.home, e.st, ref.Registry)
				if err != nil {
					return err
				}
				defer c.HTTP.CloseIdleConnections()
				p, err := c.PushArtifact(cmd.Context(), ref, capsuleoci.DistroKind, data, map[string]string{
					"org.opencontainers.image.title":   lock.Distro.Name,
					"org.opencontainers.image.version": lock.Distro.Version,
				})
				if err != nil {
					return ociError(err)
				}
				ref.Digest = p.Manifest.Digest
				fmt.Fprintln(cmd.OutOrStdout(), ref)
				fmt.Fprintf(cmd.ErrOrStderr(), "astrid: published distro %s %s (%d capsules, bundle %s)\n", lock.Distro.Name, lock.Distro.Version, len(lock.Capsules), p.Layer.Digest)
				return nil
			})
		},
	}
}

// bundleLock makes the bundle of the lock at lockPath: the lock and every
// archive it pins, each checked against it.
func bundleLock(cmd *cobra.Command, e *installEnv, lockPath string) ([]byte, *distro.Lock, error) {
	data, err := os.ReadFile(lockPath)
	if err != nil {
		return nil, nil, err
	}
	lock, err := distro.ParseLock(lockPath, data)
	if err != nil {
		return nil, nil, err
	}
	byName, err := lockedArchives(cmd, e, lockPath, lock, nil)
	if err != nil {
		return nil, nil, err
	}
	byDigest := map[string][]byte{}
	for _, c := range lock.Capsules {
		byDigest[c.Digest] = byName[c.Name]
	}
	var buf bytes.Buffer
	if err := distro.WriteBundle(&buf, data, byDigest); err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), lock, nil
}
