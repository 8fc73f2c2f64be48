package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/grants"
	"github.com/astrid-go/astrid/manifest"
)

func init() {
	capsuleSubcommands = append(capsuleSubcommands, newCapsuleUpdateCmd)
}

func newCapsuleUpdateCmd() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "update [name]...",
		Short: "Install newer versions of capsules installed from an archive, registry or URL",
		Long: `update fetches each named capsule (default: every capsule installed from an archive,
a registry or a URL) again from where it came from (a registry by its tag, not the digest it
resolved to then) and installs it when the bytes changed, checked as ` + "`capsule install`" + ` checks
them (digests, signature, trust). An older version is refused. When the new version asks for
nothing beyond what was approved, it is installed without a question; when its grants widen,
the new ones are shown and you are asked again (or --yes approves, --accept-risk for high-risk
ones). Capsules installed from a directory are skipped: reinstall them with capsule install.`,
		Example: `  astrid capsule update hello
  astrid capsule update --yes`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return withInstallEnv(func(e *installEnv) error { return runUpdate(cmd, e, args, yes) })
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "approve widened grants without asking")
	cmd.Flags().Bool(acceptRiskFlag, false, "with --yes, also accept new high-risk grants")
	cmd.Flags().Bool(allowUnsignedFlag, false, "update from an archive that is unsigned or from a publisher not in the trust store without asking")
	return cmd
}

func runUpdate(cmd *cobra.Command, e *installEnv, names []string, yes bool) error {
	caps := config.Layout(e.home).Capsules
	all := len(names) == 0
	if all {
		entries, err := os.ReadDir(caps)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		for _, d := range entries {
			if d.IsDir() && !strings.HasPrefix(d.Name(), ".") {
				names = append(names, d.Name())
			}
		}
	}
	errOut := cmd.ErrOrStderr()
	var failed []string
	for _, id := range names {
		if err := manifest.ValidateID(id); err != nil {
			return err
		}
		o, ok := readOrigin(filepath.Join(caps, id))
		if !ok {
			if _, err := os.Stat(filepath.Join(caps, id)); err != nil {
				return fmt.Errorf("capsule %s is not installed", id)
			}
			if !all {
				fmt.Fprintf(errOut, "astrid: capsule %s was installed from a directory; reinstall it with astrid capsule install <dir>\n", id)
			}
			continue
		}
		if err := updateOne(cmd, e, id, o, yes); err != nil {
			fmt.Fprintf(errOut, "astrid: capsule %s not updated: %v\n", id, err)
			failed = append(failed, id)
		}
	}
	if len(failed) > 0 {
		cmd.SilenceErrors = true
		return exitError{code: 1}
	}
	return nil
}

// updateSource is where an update fetches from: a registry source by its
// tag (the digest it was pinned to would give the same bytes).
func updateSource(src string) (string, bool) {
	if !strings.HasPrefix(src, ociScheme) {
		return src, true
	}
	at := strings.LastIndex(src, "@sha256:")
	if at < 0 {
		return src, true
	}
	name := src[:at]
	if !strings.Contains(name[strings.LastIndex(name, "/")+1:], ":") {
		return src, false // pinned by digest only: nothing newer to find
	}
	return name, true
}

func updateOne(cmd *cobra.Command, e *installEnv, id string, o installOrigin, yes bool) error {
	src, ok := updateSource(o.Source)
	if !ok {
		fmt.Fprintf(cmd.ErrOrStderr(), "astrid: capsule %s is pinned to %s (a digest, no tag); nothing to update\n", id, o.Source)
		return nil
	}
	b, resolved, err := fetchArchive(cmd, e, src)
	if err != nil {
		return err
	}
	if archiveDigest(b) == o.Digest {
		fmt.Fprintf(cmd.ErrOrStderr(), "astrid: capsule %s is up to date (%s)\n", id, shortDigest(o.Digest))
		return nil
	}
	u, err := openArchiveBytes(cmd, e, src, resolved, b, nil)
	if err != nil {
		return err
	}
	defer os.RemoveAll(u.dir)
	if u.meta.Name != id {
		return fmt.Errorf("%s now holds capsule %s", src, u.meta.Name)
	}
	m, diags := manifest.Load(u.dir)
	if m == nil || diags.Err(false) != nil {
		return fmt.Errorf("the new version does not load: %w", diags.Err(false))
	}
	if old, _ := manifest.Load(filepath.Join(config.Layout(e.home).Capsules, id)); old != nil {
		ov, err1 := manifest.ParseVersion(old.Package.Version)
		nv, err2 := manifest.ParseVersion(m.Package.Version)
		if err1 == nil && err2 == nil && nv.Compare(ov) < 0 {
			return fmt.Errorf("%s offers %s, older than the installed %s", src, m.Package.Version, old.Package.Version)
		}
	}
	// Within what was approved: no question. Wider: asked again.
	prev, approved, err := grants.NewBook(e.st).Approved(id)
	if err != nil {
		return err
	}
	quiet := approved && len(grants.Beyond(prev, grants.Of(m))) == 0
	return installFrom(cmd, e, []string{src}, u, yes || quiet)
}
