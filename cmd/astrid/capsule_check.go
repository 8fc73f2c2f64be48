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
	"github.com/astrid-go/astrid/internal/install"
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
				checkToolsFree(&r, path)
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
	Path    string   `json:"path"`
	Loads   bool     `json:"loads"`
	ID      string   `json:"id,omitempty"`
	Version string   `json:"version,omitempty"`
	Engines []string `json:"engines,omitempty"`
	// Components are the [[component]]s in load order, each checked
	// as the loader reads it.
	Components []componentCheck `json:"components,omitempty"`
	// Uplinks are the [[uplink]] entries: frontends the capsule says it
	// serves (descriptive; what it may do is its uplink grant and the
	// operator's [uplink] acts_for).
	Uplinks      []manifest.Uplink      `json:"uplinks,omitempty"`
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
	return checkReportOf(path, m, diags, strict)
}

// checkReportOf is the report on a manifest already read from path (or
// embedded in the binary).
func checkReportOf(path string, m *manifest.Manifest, diags manifest.Diagnostics, strict bool) checkReport {
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
	r.Uplinks = m.Uplinks
	r.Components = checkComponents(m, r.Loads)
	for _, c := range r.Components {
		if c.err != nil {
			r.Diagnostics = append(r.Diagnostics, manifest.Diagnostic{Severity: manifest.Error, File: m.File, Key: "component", Message: c.err.Error()})
			r.Loads, r.errs = false, r.errs+1
		}
	}
	return r
}

// checkToolsFree adds install's refusal of a tool another capsule (a
// built-in, or one installed in this home) already provides, so check
// says before install does that the capsule could not run here.
func checkToolsFree(r *checkReport, path string) {
	if !r.Loads {
		return
	}
	m, diags := manifest.Load(path)
	if m == nil || diags.Err(false) != nil {
		return
	}
	home, _ := config.Home() // none: the built-ins are still checked
	if err := install.CheckTools(install.Options{Home: home, Builtins: runtimeBuiltins()}, m); err != nil {
		msg := strings.TrimPrefix(err.Error(), "install: ")
		r.Diagnostics = append(r.Diagnostics, manifest.Diagnostic{Severity: manifest.Error, File: m.File, Key: "tool", Message: msg})
		r.Loads, r.errs = false, r.errs+1
	}
}

// componentCheck is one [[component]] as check found it.
type componentCheck struct {
	ID     string   `json:"id,omitempty"`
	File   string   `json:"file"`
	Type   string   `json:"type"`
	Link   []string `json:"link,omitempty"`
	SHA256 string   `json:"sha256,omitempty"`
	// Status is "ok", "not built" (no file yet: the manifest warns) or
	// "not checked" (the manifest has errors, or it is not on disk).
	Status string `json:"status"`
	err    error
}

func (c componentCheck) String() string {
	s := c.File + ", " + c.Type
	if c.ID != "" {
		s = c.ID + " (" + s + ")"
	} else {
		s = "(" + s + ")"
	}
	if len(c.Link) > 0 {
		s += " links " + strings.Join(c.Link, ", ")
	}
	switch {
	case c.err != nil:
		return s + ": refused (see the error below)"
	case c.SHA256 != "":
		return s + ": " + c.Status + " " + c.SHA256
	}
	return s + ": " + c.Status
}

// checkComponents runs the wasm loader's own integrity check on each of
// m's components (the same read, size limit and hashes), so that check
// never says "loads" for a module load would refuse. A component not
// built yet is left to the manifest's warning.
func checkComponents(m *manifest.Manifest, check bool) []componentCheck {
	var out []componentCheck
	onDisk := m.Dir != "" && filepath.Base(m.File) == manifest.FileName
	for i := range m.Components {
		comp := &m.Components[i]
		c := componentCheck{ID: comp.ID, File: comp.File, Type: comp.Type, Link: comp.Link, Status: "not checked"}
		if check && onDisk {
			sum, err := wasm.CheckComponentFile(m, comp, int64(componentLimit()))
			switch {
			case errors.Is(err, fs.ErrNotExist):
				c.Status = "not built"
			case err != nil:
				c.err = err
			default:
				c.Status, c.SHA256 = "ok", sum
			}
		}
		out = append(out, c)
	}
	return out
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
	if len(r.Components) > 0 {
		var cs []string
		for _, c := range r.Components {
			cs = append(cs, c.String())
		}
		list(w, "components", cs, "")
	}
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
	if len(r.Uplinks) > 0 {
		var ups []string
		for _, u := range r.Uplinks {
			ups = append(ups, fmt.Sprintf("%s (platform %s, profile %s)", u.Name, u.Platform, u.Profile))
		}
		list(w, "uplinks", ups, "")
	}
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
	switch {
	case n == 1:
		return "1 " + word
	case strings.HasSuffix(word, "y"):
		return fmt.Sprintf("%d %sies", n, word[:len(word)-1])
	}
	return fmt.Sprintf("%d %ss", n, word)
}
