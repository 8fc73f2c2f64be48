package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/engine/wasm"
	"github.com/astrid-go/astrid/manifest"
)

func newCapsuleCheckCmd() *cobra.Command {
	var asJSON, strict bool
	cmd := &cobra.Command{
		Use:   "check <dir-or-Capsule.toml>...",
		Short: "Validate capsule manifests and show what each capsule would be granted",
		Long: "check loads each capsule's Capsule.toml and prints its id, version, engines, publish and\n" +
			"subscribe ACL, interceptors, granted capabilities, env entries and every diagnostic.\n" +
			"It exits 1 when any capsule does not load (with --strict, when any has a warning).",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			reports := make([]checkReport, 0, len(args))
			ok := true
			for _, path := range args {
				r := newCheckReport(path, strict)
				ok = ok && r.Loads
				reports = append(reports, r)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(reports); err != nil {
					return fmt.Errorf("capsule check: write JSON: %w", err)
				}
			} else {
				for i, r := range reports {
					if i > 0 {
						fmt.Fprintln(out)
					}
					r.writeText(out)
				}
			}
			if !ok {
				// The report already says why; cobra need not add a line.
				cmd.SilenceErrors = true
				return exitError{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the reports as JSON")
	cmd.Flags().BoolVar(&strict, "strict", false, "treat warnings as errors")
	return cmd
}

// checkReport is what `capsule check` says about one capsule; --json
// prints it as is.
type checkReport struct {
	Path         string                 `json:"path"`
	Loads        bool                   `json:"loads"`
	ID           string                 `json:"id,omitempty"`
	Version      string                 `json:"version,omitempty"`
	Engines      []string               `json:"engines,omitempty"`
	Publish      []string               `json:"publish"`
	Subscribe    []string               `json:"subscribe"`
	Interceptors []manifest.Interceptor `json:"interceptors"`
	Imports      []manifest.Import      `json:"imports,omitempty"`
	Exports      []manifest.Export      `json:"exports,omitempty"`
	Capabilities manifest.Capabilities  `json:"capabilities"`
	// HighRisk names the high-risk grants (manifest.RiskHigh), shown
	// first; Risks ranks every grant with its reason.
	HighRisk    []string             `json:"high_risk,omitempty"`
	Risks       []manifest.Risk      `json:"risks,omitempty"`
	Tools       []manifest.Tool      `json:"tools,omitempty"`
	Env         []manifest.EnvVar    `json:"env,omitempty"`
	Diagnostics manifest.Diagnostics `json:"diagnostics"`
	granted     []string
	errs, warns int
	strict      bool
}

func newCheckReport(path string, strict bool) checkReport {
	m, diags := manifest.Load(path)
	r := checkReport{
		Path: path, Loads: diags.Err(strict) == nil && m != nil, Diagnostics: diags,
		Publish: []string{}, Subscribe: []string{}, Interceptors: []manifest.Interceptor{},
		errs: diags.Count(manifest.Error), warns: diags.Count(manifest.Warning), strict: strict,
	}
	if m == nil {
		return r
	}
	r.ID, r.Version = m.ID(), m.Package.Version
	r.Engines = m.Engines()
	r.Publish, r.Subscribe = m.PublishPatterns(), m.SubscribePatterns()
	if ics := m.Interceptors(); ics != nil {
		r.Interceptors = ics
	}
	r.Imports, r.Exports = m.Imports, m.Exports
	r.Capabilities, r.granted = m.Capabilities, m.Capabilities.Granted()
	r.Risks = m.Capabilities.Risks()
	for _, risk := range r.Risks {
		if risk.Level == manifest.RiskHigh {
			r.HighRisk = append(r.HighRisk, risk.Grant)
		}
	}
	r.Tools = m.Tools
	r.Env = m.Env
	if r.Loads {
		if d, failed := checkIntegrity(m); failed {
			r.Diagnostics = append(r.Diagnostics, d)
			r.Loads, r.errs = false, r.errs+1
		}
	}
	return r
}

// checkIntegrity runs the wasm loader's own integrity check on m's
// executable component (the same read, size limit and hashes), so that
// check never says "loads" for a module load would refuse. A component not
// built yet is left to the manifest's warning.
func checkIntegrity(m *manifest.Manifest) (manifest.Diagnostic, bool) {
	if m.Dir == "" || filepath.Base(m.File) != manifest.FileName || m.ExecutableComponent() == nil {
		return manifest.Diagnostic{}, false
	}
	_, err := wasm.CheckComponent(m, int64(componentLimit()))
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return manifest.Diagnostic{}, false
	}
	return manifest.Diagnostic{Severity: manifest.Error, File: m.File, Key: "component", Message: err.Error()}, true
}

// componentLimit is limits.max_component_bytes of the operator's
// config.toml, or its default when there is none (or it does not load:
// other commands report that).
func componentLimit() int {
	if home, err := config.Home(); err == nil {
		if cfg, err := config.Load(filepath.Join(home, "config.toml")); err == nil {
			return cfg.Limits.MaxComponentBytes
		}
	}
	return config.Default().Limits.MaxComponentBytes
}

func (r checkReport) writeText(w io.Writer) {
	id := r.ID
	if id == "" {
		id = "(unnamed)"
	}
	status := "loads"
	if !r.Loads {
		status = "does not load"
	}
	fmt.Fprintf(w, "%s %s  %s\n", id, r.Version, r.Path)
	for _, risk := range r.Risks {
		// First and loud: what these grants allow goes beyond the
		// capsule's own resources.
		if risk.Level == manifest.RiskHigh {
			fmt.Fprintf(w, "  !! HIGH RISK: %s: %s\n", risk.Grant, risk.Reason)
		}
	}
	counts := plural(r.errs, "error") + ", " + plural(r.warns, "warning")
	if r.strict {
		counts += ", strict: warnings fail"
	}
	fmt.Fprintf(w, "  status:       %s (%s)\n", status, counts)
	if r.ID == "" && len(r.Engines) == 0 {
		writeDiagnostics(w, r.Diagnostics)
		return
	}
	fmt.Fprintf(w, "  engines:      %s\n", strings.Join(r.Engines, ", "))
	list(w, "publish", r.Publish, "none: may publish nothing")
	list(w, "subscribe", r.Subscribe, "none: may subscribe to nothing")
	var ics []string
	for _, ic := range r.Interceptors {
		ics = append(ics, fmt.Sprintf("%s -> %s (priority %d)", ic.Pattern, ic.Handler, ic.Priority))
	}
	list(w, "interceptors", ics, "none")
	var imps []string
	for _, i := range r.Imports {
		s := i.Name + " " + i.Requirement
		if i.Optional {
			s += " (optional)"
		}
		imps = append(imps, s)
	}
	list(w, "imports", imps, "none")
	var exps []string
	for _, e := range r.Exports {
		exps = append(exps, e.Name+" "+e.Version)
	}
	list(w, "exports", exps, "none")
	list(w, "capabilities", r.granted, "none")
	var risks []string
	for _, risk := range r.Risks {
		risks = append(risks, fmt.Sprintf("%-6s %s: %s", risk.Level, risk.Grant, risk.Reason))
	}
	list(w, "risks", risks, "none: it may use only its own state")
	var tools []string
	for _, t := range r.Tools {
		s := t.Name
		switch {
		case t.AsksApproval:
			// The approval capsule will not ask for this tool: the
			// operator should know the capsule says it asks itself.
			s += " (mutable; asks the person itself for each call, so the approval layer does not ask)"
		case t.Mutable:
			s += " (mutable)"
		}
		tools = append(tools, s)
	}
	list(w, "tools", tools, "none declared")
	var env []string
	for _, e := range r.Env {
		s := e.Key + " (" + e.Type + ")"
		if e.Default != nil {
			s += " default " + fmt.Sprintf("%q", *e.Default)
		}
		env = append(env, s)
	}
	list(w, "env", env, "none")
	writeDiagnostics(w, r.Diagnostics)
}

func list(w io.Writer, label string, items []string, empty string) {
	if len(items) == 0 {
		fmt.Fprintf(w, "  %-13s (%s)\n", label+":", empty)
		return
	}
	fmt.Fprintf(w, "  %-13s %s\n", label+":", items[0])
	for _, it := range items[1:] {
		fmt.Fprintf(w, "  %-13s %s\n", "", it)
	}
}

func writeDiagnostics(w io.Writer, ds manifest.Diagnostics) {
	if len(ds) == 0 {
		return
	}
	fmt.Fprintln(w, "  diagnostics:")
	for _, d := range ds {
		fmt.Fprintf(w, "    %s\n", d)
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
