package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/grants"
	"github.com/astrid-go/astrid/internal/install"
	"github.com/astrid-go/astrid/internal/runtime"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/manifest"
)

func init() {
	capsuleSubcommands = append(capsuleSubcommands, newCapsuleInstallCmd, newCapsuleApproveCmd, newCapsuleRemoveCmd)
}

func newCapsuleInstallCmd() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "install <dir> | <file.capsule> | <capsule.wasm> <Capsule.toml>",
		Short: "Install a capsule into $ASTRID_HOME/capsules after showing its grants",
		Long: `install copies the capsule into a hidden staging directory of $ASTRID_HOME/capsules and
checks it there: the same report as ` + "`astrid capsule check`" + ` (it refuses a capsule that
does not load), the wasm module against the hashes of [[component]] and meta.json, its
name (never a built-in's). It shows the grants, the high-risk ones first, and what they add
to an earlier approval, and asks you to confirm on the terminal. Then it asks for the
[env] values that have none yet (secrets are not echoed; leave one empty to set it later
with ` + "`astrid capsule env set`" + `), records the grants you approved, and renames the staged
directory to capsules/<name> in one step (a reinstall replaces the old install the same
way). When a daemon runs, it loads the capsule at once and the command returns once the
capsule serves, naming its tools, or says why it did not load. Every load of the
capsule is held to the grants approved here: a manifest edited afterwards to ask for
more does not load until it is installed or approved again.

Each grant is ranked (high, medium, low) with what it allows. High-risk grants (writes
outside the workspace, any program, any host, the uplink, prompt injection, tool
middleware) are accepted only by typing the capsule's name, or with --yes --accept-risk:
a bare --yes refuses them.

An archive (a .capsule file from ` + "`astrid capsule pack`" + `) is read with every escape refused
(paths out of it, links, duplicates, sizes past the limits) and each file checked against
its meta.json sha256 before anything is staged. Signed by a publisher in the trust store
(` + "`astrid trust add`" + `), it installs as theirs; unsigned or signed by an unknown key, install asks
first (or needs --allow-unsigned); a signature that does not match is always refused.
` + "`astrid capsule list`" + ` shows the archive it came from and its digest.

Without a terminal, pass --yes to install what the report shows (nothing is asked then;
set [env] values with ` + "`astrid capsule env set`" + `).

Exit status: 0 installed; 1 refused (errors, not confirmed) or failed, or a running
daemon could not load it (it stays installed).`,
		Example: `  astrid capsule build examples/hello && astrid capsule install examples/hello
  astrid capsule install hello-0.1.0.capsule
  astrid capsule install build/hello.wasm examples/hello/Capsule.toml --yes`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInstall(cmd, args, yes)
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "install without asking (you reviewed the grants); [env] values are not asked for")
	cmd.Flags().Bool(allowUnsignedFlag, false, "install an archive that is unsigned or signed by a publisher not in the trust store without asking (a bad signature is refused regardless)")
	cmd.Flags().Bool(acceptRiskFlag, false, "with --yes, also accept the high-risk grants the report lists first (without it --yes refuses them)")
	return cmd
}

// installEnv is what install, approve and remove share: the home, its
// config, the installer's options and the state database.
type installEnv struct {
	home string
	opts install.Options
	st   *store.Store
}

func openInstallEnv() (*installEnv, error) {
	home, err := config.Home()
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(config.Layout(home).Config)
	if err != nil {
		return nil, err
	}
	st, err := store.Open(config.Layout(home).State, store.Options{Timeout: cfg.StoreLockWait.Duration})
	if err != nil {
		return nil, err
	}
	return &installEnv{home: home, st: st, opts: install.Options{
		Home: home, Reserved: reservedIDs(), Builtins: runtimeBuiltins(), MaxComponentBytes: int64(cfg.Limits.MaxComponentBytes),
	}}, nil
}

// runtimeBuiltins are the binary's built-in capsules as the runtime takes
// them: an install checks their tools.
func runtimeBuiltins() []runtime.Builtin {
	bs := builtins()
	out := make([]runtime.Builtin, len(bs))
	for i, b := range bs {
		out[i] = runtime.Builtin(b)
	}
	return out
}

// withInstallEnv runs fn with the install environment open, and closes it.
func withInstallEnv(fn func(*installEnv) error) (err error) {
	e, err := openInstallEnv()
	if err != nil {
		return err
	}
	defer func() {
		if cerr := e.st.Close(); err == nil {
			err = cerr
		}
	}()
	return fn(e)
}

// reservedIDs are the ids an install may not take: the built-ins', the
// frontends' and the kernel's.
func reservedIDs() map[string]string {
	out := map[string]string{ipc.KernelSourceID: "the kernel"}
	for _, b := range builtins() {
		if m, diags := manifest.Parse(b.Manifest, manifest.FileName, ""); diags.Err(false) == nil {
			out[m.ID()] = "a built-in capsule"
		}
	}
	for _, f := range frontends() {
		out[f.ID] = "a frontend of the astrid command"
	}
	return out
}

func runInstall(cmd *cobra.Command, args []string, yes bool) error {
	return withInstallEnv(func(e *installEnv) error { return runInstallIn(cmd, e, args, yes) })
}

func runInstallIn(cmd *cobra.Command, e *installEnv, args []string, yes bool) error {
	if isArchiveSource(args) {
		u, err := openArchive(cmd, e, args[0])
		if err != nil {
			return err
		}
		defer os.RemoveAll(u.dir)
		return installFrom(cmd, e, args, u, yes)
	}
	return installFrom(cmd, e, args, nil, yes)
}

// installFrom installs the capsule args name, or the archive packed
// (extracted, verified and confirmed) that args[0] named.
func installFrom(cmd *cobra.Command, e *installEnv, args []string, packed *unpacked, yes bool) error {
	srcArgs := args
	if packed != nil {
		srcArgs = []string{packed.dir}
	}
	staged, err := install.Stage(e.opts, srcArgs...)
	if err != nil {
		return err
	}
	defer staged.Abort()
	if ok, err := reviewStaged(cmd, e, args, packed, staged, yes); err != nil || !ok {
		return err
	}
	missing, err := askEnv(cmd, e.st, staged.Manifest, yes)
	if err != nil {
		return err
	}
	if err := staged.Commit(e.st); err != nil {
		return err
	}
	installed(cmd, staged, missing)
	return daemonLoaded(cmd, e.home, staged.Manifest.ID())
}

// reviewStaged is what an install does before it asks for env values and
// commits: the staged capsule's origin recorded, its report and grants
// shown, and the operator's confirmation. ok is false when the operator
// declined.
func reviewStaged(cmd *cobra.Command, e *installEnv, args []string, packed *unpacked, staged *install.Staged, yes bool) (ok bool, err error) {
	var origin *installOrigin
	if packed != nil {
		origin = &packed.origin
		staged.Source = args[0]
	}
	if err := writeOrigin(staged.Dir, origin); err != nil {
		return false, err
	}
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	report := newCheckReport(staged.Dir, false)
	report.Path = staged.Source
	report.Diagnostics = sourceDiagnostics(report.Diagnostics, staged.Dir, args)
	report.writeText(out)
	if !report.Loads || staged.Manifest == nil {
		fmt.Fprintln(errOut, "astrid: not installed: the capsule does not load (see the report above)")
		cmd.SilenceErrors = true
		return false, exitError{code: 1}
	}
	m := staged.Manifest
	if packed != nil && (packed.meta.Name != m.ID() || packed.meta.Version != m.Package.Version) {
		return false, fmt.Errorf("install %s: refused: meta.json says %s %s, its Capsule.toml %s %s; nothing was installed", args[0], packed.meta.Name, packed.meta.Version, m.ID(), m.Package.Version)
	}
	showApprovalChange(out, e.st, m)
	what := "Install"
	if staged.Replaces {
		what = "Replace the installed"
	}
	return confirmGrants(cmd, yes, m, fmt.Sprintf("%s capsule %s with the grants above?", what, m.ID()))
}

// installed says what an install committed.
func installed(cmd *cobra.Command, staged *install.Staged, missing []string) {
	m, errOut := staged.Manifest, cmd.ErrOrStderr()
	how := "installed"
	if staged.Replaces {
		how = "reinstalled (the previous install is replaced)"
	}
	fmt.Fprintf(errOut, "astrid: capsule %s %s in %s; its grants are approved as shown\n", m.ID(), how, staged.Target)
	for _, key := range missing {
		fmt.Fprintf(errOut, "astrid: capsule %s has no value for %s yet; set it with: astrid capsule env set %s %s\n", m.ID(), key, m.ID(), key)
	}
}

// daemonLoaded has a running daemon load capsule id (loadInDaemon); one it
// could not load fails the command (exit 1), having said why.
func daemonLoaded(cmd *cobra.Command, home, id string) error {
	if err := loadInDaemon(cmd.ErrOrStderr(), home, id); err != nil {
		cmd.SilenceErrors = true
		fmt.Fprintln(cmd.ErrOrStderr(), "astrid:", err)
		return exitError{code: 1}
	}
	return nil
}

// showApprovalChange says how m's grants compare with what was approved
// for its id before, if anything was.
func showApprovalChange(w io.Writer, st *store.Store, m *manifest.Manifest) {
	prev, ok, err := grants.NewBook(st).Approved(m.ID())
	if err != nil || !ok {
		return // an unreadable record is replaced, as a missing one is
	}
	if more := grants.Beyond(prev, grants.Of(m)); len(more) > 0 {
		list(w, "NEW GRANTS", more, "")
		return
	}
	fmt.Fprintf(w, "  approval:     within what was approved for %s before\n", m.ID())
}

// acceptRiskFlag, with --yes, accepts high-risk grants (manifest.RiskHigh).
const acceptRiskFlag = "accept-risk"

// confirmGrants asks the person to approve m's grants; --yes approves.
// High-risk grants need more than a keystroke: typing the capsule's name on
// the terminal, or --yes with --accept-risk; a bare --yes refuses them, so
// a script written for a harmless capsule cannot install a dangerous one.
// Nobody to ask and no --yes is a refusal that says how to proceed.
func confirmGrants(cmd *cobra.Command, yes bool, m *manifest.Manifest, question string) (bool, error) {
	high := m.Capabilities.HighRisks()
	accept, _ := cmd.Flags().GetBool(acceptRiskFlag)
	refuse := func(format string, a ...any) (bool, error) {
		cmd.SilenceErrors = true
		fmt.Fprintf(cmd.ErrOrStderr(), "astrid: "+format+"\n", a...)
		return false, exitError{code: 1}
	}
	if yes {
		if len(high) > 0 && !accept {
			return refuse("not approved: capsule %s asks for %s (listed first above); --yes alone does not accept them: review them and pass --yes --%s, or run in a terminal and type the capsule's name",
				m.ID(), plural(len(high), "high-risk grant"), acceptRiskFlag)
		}
		return true, nil
	}
	t := terminalOf(cmd)
	if t == nil {
		how := "--yes"
		if len(high) > 0 {
			how = "--yes --" + acceptRiskFlag
		}
		return refuse("not approved: approving grants the capsule everything listed above, and nobody can confirm it here (standard input is not a terminal); review the report and run again with %s, or run it in a terminal", how)
	}
	if len(high) > 0 {
		fmt.Fprintf(t.out, "%s\nIt asks for %s (the HIGH RISK lines above). Type its name, %s, to accept them: ", question, plural(len(high), "high-risk grant"), m.ID())
		answer, err := t.line()
		if err != nil {
			return false, err
		}
		if strings.TrimSpace(answer) != m.ID() {
			return refuse("not approved (the name was not typed); nothing was changed")
		}
		return true, nil
	}
	ok, err := t.confirm(question)
	if err != nil {
		return false, err
	}
	if !ok {
		return refuse("not approved; nothing was changed")
	}
	return true, nil
}

// askEnv asks, on the terminal, for each of m's [env] values that has no
// value yet, stores the ones given, and returns the keys still without a
// value (or a default). With --yes, or without a terminal, it asks nothing.
func askEnv(cmd *cobra.Command, st *store.Store, m *manifest.Manifest, yes bool) ([]string, error) {
	var missing []string
	t := terminalOf(cmd)
	for _, def := range m.Env {
		if has, err := hasEnvValue(st, m.ID(), def.Key); err != nil || has {
			if err != nil {
				return nil, err
			}
			continue
		}
		if def.Type == manifest.EnvSelect && len(def.EnumValues) == 1 && def.Default == nil {
			// One choice is no question (seed 003): it fills itself.
			if err := storeEnvValue(st, m.ID(), def, def.EnumValues[0]); err != nil {
				return nil, err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "astrid: %s: set to %q, its only choice\n", def.Key, def.EnumValues[0])
			continue
		}
		if yes || t == nil {
			if def.Default == nil {
				missing = append(missing, def.Key)
			}
			continue
		}
		value, err := askEnvUntilValid(cmd, t, def)
		if err != nil {
			return nil, err
		}
		if value == "" {
			if def.Default == nil {
				missing = append(missing, def.Key)
			}
			continue
		}
		if err := storeEnvValue(st, m.ID(), def, value); err != nil {
			return nil, err
		}
	}
	return missing, nil
}

// envAsks is how many times install asks for one [env] value its type
// refuses before it leaves the key unset (to be set later).
const envAsks = 3

// askEnvUntilValid asks for def's value until one passes its type's check
// (a select's value among its choices), at most envAsks times; "" when
// nothing was given or every answer was refused.
func askEnvUntilValid(cmd *cobra.Command, t *operatorTerminal, def manifest.EnvVar) (string, error) {
	for attempt := 1; ; attempt++ {
		value, err := askEnvValue(cmd, t, def)
		if err != nil || value == "" {
			return "", err
		}
		err = checkEnvValue(def, value)
		if err == nil {
			return value, nil
		}
		if attempt == envAsks {
			fmt.Fprintf(cmd.ErrOrStderr(), "astrid: %s: %v; not stored (set it later with astrid capsule env set)\n", def.Key, err)
			return "", nil
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "astrid: %s: %v; try again\n", def.Key, err)
	}
}

// askEnvValue reads one value: a secret with echo off, anything else
// through readEnvValue (capsule env set's own reading).
func askEnvValue(cmd *cobra.Command, t *operatorTerminal, def manifest.EnvVar) (string, error) {
	if def.Default != nil {
		fmt.Fprintf(t.out, "astrid: %s: leave it empty to keep the default %q\n", def.Key, *def.Default)
	} else {
		fmt.Fprintf(t.out, "astrid: %s: leave it empty to set it later\n", def.Key)
	}
	if def.Type == manifest.EnvSelect && len(def.EnumValues) > 0 {
		fmt.Fprintf(t.out, "astrid: %s: one of %s\n", def.Key, strings.Join(def.EnumValues, ", "))
	}
	if def.Type == manifest.EnvSecret {
		prompt := def.Request
		if prompt == "" {
			prompt = "Value of " + def.Key
		}
		fmt.Fprintf(t.out, "%s (not shown as you type): ", prompt)
		value, ok, err := t.secret()
		if ok || err != nil {
			return value, err
		}
		fmt.Fprintln(t.out)
	}
	return readEnvValue(cmd, def)
}

// hasEnvValue reports whether the operator stored key for capsule id.
func hasEnvValue(st *store.Store, id, key string) (bool, error) {
	if _, ok, err := st.Config(id).Get(key); err != nil || ok {
		return ok, err
	}
	keys, err := st.Secrets(id).List()
	return slices.Contains(keys, key), err
}

func newCapsuleApproveCmd() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "approve <capsule>",
		Short: "Review and approve the grants of a capsule already in $ASTRID_HOME/capsules",
		Long: `approve shows the ` + "`capsule check`" + ` report of an installed capsule that does not load
for want of approval (copied into $ASTRID_HOME/capsules by hand, or its manifest edited
to ask for more), with what it asks for beyond its earlier approval, and on your
confirmation records its grants as approved: it loads from the next boot, and a running
daemon loads it at once; the command returns once it serves, naming its tools (or why
it did not load).

Exit status: 0 approved (or nothing new to approve); 1 refused or failed, or a running
daemon could not load it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withInstallEnv(func(e *installEnv) error { return runApprove(cmd, e, args[0], yes) })
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "approve without asking (you reviewed the grants)")
	cmd.Flags().Bool(acceptRiskFlag, false, "with --yes, also accept the high-risk grants the report lists first (without it --yes refuses them)")
	return cmd
}

func newCapsuleRemoveCmd() *cobra.Command {
	var purge bool
	cmd := &cobra.Command{
		Use:   "remove <capsule>",
		Short: "Remove an installed capsule (its state too with --purge)",
		Long: `remove deletes the capsule's approval and its directory in $ASTRID_HOME/capsules (renamed
aside first, so nothing half-deleted ever loads). Its KV (for every principal), its config
values and its secrets stay, so a reinstall finds them, unless --purge deletes them too.
Built-in capsules are part of the binary and cannot be removed.

Exit status: 0 removed; 1 not installed, a built-in, or failed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withInstallEnv(func(e *installEnv) error { return runRemove(cmd, e, args[0], purge) })
		},
	}
	cmd.Flags().BoolVar(&purge, "purge", false, "also delete the capsule's KV for every principal, its config values and its secrets")
	return cmd
}

// runApprove shows installed capsule id's report and records its grants
// once the person confirms them.
func runApprove(cmd *cobra.Command, e *installEnv, id string, yes bool) error {
	c, err := install.Find(e.opts, id)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	report := newCheckReport(c.Dir, false)
	report.writeText(out)
	if !report.Loads {
		cmd.SilenceErrors = true
		fmt.Fprintln(cmd.ErrOrStderr(), "astrid: not approved: the capsule does not load (see the report above)")
		return exitError{code: 1}
	}
	book := grants.NewBook(e.st)
	if err := grants.Check(book, c.Manifest); err == nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "astrid: capsule %s asks for nothing beyond what is approved; nothing to do\n", c.ID())
		return nil
	}
	showApprovalChange(out, e.st, c.Manifest)
	if ok, err := confirmGrants(cmd, yes, c.Manifest, fmt.Sprintf("Approve capsule %s with the grants above?", c.ID())); err != nil || !ok {
		return err
	}
	// What is approved is what was shown: a manifest changed while the
	// person read the report is not approved.
	again, diags := manifest.Load(c.Dir)
	if diags.Err(false) != nil || again == nil || !slices.Equal(grants.Of(again).Grants, grants.Of(c.Manifest).Grants) ||
		!slices.Equal(grants.Of(again).MutableTools, grants.Of(c.Manifest).MutableTools) {
		return errors.New("capsule approve: the manifest changed while it was being reviewed; run approve again")
	}
	if err := book.Approve(c.Manifest); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "astrid: the grants of capsule %s are approved\n", c.ID())
	return daemonLoaded(cmd, e.home, c.ID())
}

// runRemove removes installed capsule id (and its state with purge).
func runRemove(cmd *cobra.Command, e *installEnv, id string, purge bool) error {
	got, err := install.Remove(e.opts, e.st, id, purge)
	if err != nil {
		return err
	}
	for _, d := range got.Dirs {
		fmt.Fprintf(cmd.ErrOrStderr(), "astrid: removed %s\n", d)
	}
	if got.Purged {
		fmt.Fprintf(cmd.ErrOrStderr(), "astrid: deleted the KV, config values and secrets of capsule %s\n", id)
	} else {
		fmt.Fprintf(cmd.ErrOrStderr(), "astrid: the KV, config values and secrets of capsule %s are kept (--purge deletes them)\n", id)
	}
	n, err := forgetAlwaysAllowed(e.st, id)
	if n > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "astrid: forgot %d \"always\" approval(s) given to its tools\n", n)
	}
	return err
}

// forgetAlwaysAllowed revokes, for every principal, the capability tokens
// ("always" approvals and operator grants) given to capsule id's tools,
// purge or not: they were given to the code the person saw, and a capsule
// installed again under the id may differ. ("This session" tokens live in
// the running kernel's memory; it drops them when it unloads the capsule.)
func forgetAlwaysAllowed(st *store.Store, id string) (int, error) {
	book, err := openCaps(st)
	if err != nil {
		return 0, fmt.Errorf("capsule remove: forget the approvals of %s: %w", id, err)
	}
	principals, err := st.KVPrincipals(ipc.KernelSourceID)
	if err != nil {
		return 0, fmt.Errorf("capsule remove: forget the approvals of %s: %w", id, err)
	}
	total := 0
	for _, p := range principals {
		n, err := book.RevokeCapsule(p, id)
		total += n
		if err != nil {
			return total, fmt.Errorf("capsule remove: forget the approvals of %s: %w", id, err)
		}
	}
	return total, nil
}

// sourceDiagnostics points diagnostics about the staged copy (a hidden
// directory under capsules/ that is gone once install ends) at the files
// the operator gave, so that file:line leads to something to edit.
func sourceDiagnostics(ds manifest.Diagnostics, stagedDir string, src []string) manifest.Diagnostics {
	toml := ""
	for _, s := range src {
		switch {
		case filepath.Base(s) == manifest.FileName:
			toml = s
		case len(src) == 1:
			toml = filepath.Join(s, manifest.FileName)
		}
	}
	if toml == "" {
		return ds
	}
	out := slices.Clone(ds)
	for i, d := range out {
		if d.File == filepath.Join(stagedDir, manifest.FileName) {
			out[i].File = toml
		}
	}
	return out
}
