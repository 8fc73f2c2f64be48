package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/daemon"
	"github.com/astrid-go/astrid/internal/runtime"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/internal/uplinkwire"
	"github.com/astrid-go/astrid/manifest"
)

func init() {
	capsuleSubcommands = append(capsuleSubcommands, newCapsuleTreeCmd, newCapsuleShowCmd)
}

// discoverCapsules lists the capsules a kernel of home would consider (the
// built-ins, then $ASTRID_HOME/capsules), reading manifests only.
func discoverCapsules(home string) ([]*runtime.Candidate, []runtime.Problem, error) {
	var bis []runtime.Builtin
	for _, b := range builtins() {
		bis = append(bis, runtime.Builtin{Manifest: b.Manifest, New: b.New})
	}
	return runtime.Discover(bis, config.Layout(home).Capsules)
}

func newCapsuleTreeCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tree",
		Short: "Show the capsules' dependency graph, from their manifests' imports and exports",
		Long: `Draws which capsule needs which: each capsule that nothing else imports from is a
root, and under it every [imports] entry with the capsules whose [exports] meet it
(name and version requirement), down to capsules that import nothing. A capsule
that would not load (a required import no one meets, a dependency cycle) is marked
with why; an optional import no one meets is shown as such. Capsules with no
imports and no dependents are listed after the trees.

It reads the manifests of the built-ins and of $ASTRID_HOME/capsules only: nothing is
loaded, no daemon is asked.

Exit status: 0 when every capsule would load; 1 when one would not.`,
		Example: `  astrid capsule tree
  astrid capsule tree --json | jq '.[] | select(.problem)'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, err := config.Home()
			if err != nil {
				return err
			}
			cands, problems, err := discoverCapsules(home)
			if err != nil {
				return err
			}
			nodes := runtime.Graph(cands)
			if asJSON {
				if err := writeJSON(cmd.OutOrStdout(), nodes); err != nil {
					return err
				}
			} else {
				writeTree(cmd.OutOrStdout(), nodes)
				for _, p := range problems {
					fmt.Fprintf(cmd.OutOrStdout(), "%s (%s): cannot be read: %v\n", p.ID, p.Dir, p.Err)
				}
			}
			for _, n := range nodes {
				if n.Problem != "" {
					return exitError{code: 1}
				}
			}
			if len(problems) > 0 {
				return exitError{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the graph as JSON: every capsule with its imports (and their providers), exports, dependents and problem")
	return cmd
}

// writeTree prints the graph as trees from its roots (capsules nothing
// imports from), then the capsules on a cycle no root reaches, then those
// with no edge at all on one line.
func writeTree(w io.Writer, nodes []runtime.Node) {
	by := map[string]runtime.Node{}
	for _, n := range nodes {
		by[n.ID] = n
	}
	label := func(n runtime.Node) string {
		s := n.ID + " " + n.Version
		if n.Builtin {
			s += " (built-in)"
		}
		for _, e := range n.Exports {
			s += "  exports " + e.Name + " " + e.Version
		}
		if n.Problem != "" {
			s += "  !! does not load: " + n.Problem
		}
		return s
	}
	shown := map[string]bool{}
	var walk func(n runtime.Node, prefix string, path []string)
	walk = func(n runtime.Node, prefix string, path []string) {
		shown[n.ID] = true
		for i, d := range n.Imports {
			last := i == len(n.Imports)-1
			branch, more := "├─ ", "│  "
			if last {
				branch, more = "└─ ", "   "
			}
			req := d.Name + " " + d.Requirement
			if d.Optional {
				req += " (optional)"
			}
			if len(d.Providers) == 0 {
				fmt.Fprintf(w, "%s%simports %s: not met (%s)\n", prefix, branch, req, d.Unmet)
				continue
			}
			fmt.Fprintf(w, "%s%simports %s from %s\n", prefix, branch, req, strings.Join(d.Providers, ", "))
			for j, p := range d.Providers {
				sub := prefix + more
				pb, pm := "├─ ", "│  "
				if j == len(d.Providers)-1 {
					pb, pm = "└─ ", "   "
				}
				if slices.Contains(path, p) {
					fmt.Fprintf(w, "%s%s%s (cycle)\n", sub, pb, p)
					continue
				}
				fmt.Fprintf(w, "%s%s%s\n", sub, pb, label(by[p]))
				walk(by[p], sub+pm, append(path, p))
			}
		}
	}
	var alone []string
	for _, n := range nodes {
		if len(n.Dependents) > 0 {
			continue
		}
		if len(n.Imports) == 0 {
			alone = append(alone, n.ID)
			continue
		}
		fmt.Fprintln(w, label(n))
		walk(n, "", []string{n.ID})
	}
	for _, n := range nodes {
		if !shown[n.ID] && len(n.Dependents) > 0 && len(n.Imports) > 0 {
			fmt.Fprintln(w, label(n))
			walk(n, "", []string{n.ID})
		}
	}
	if len(alone) > 0 {
		fmt.Fprintf(w, "no imports, no dependents: %s\n", strings.Join(alone, ", "))
	}
}

// capsuleShow is what `astrid capsule show --json` prints.
type capsuleShow struct {
	checkReport
	Description string `json:"description,omitempty"`
	Builtin     bool   `json:"builtin,omitempty"`
	Dir         string `json:"dir,omitempty"`
	// Live is the running daemon's view of it (nil: no daemon runs).
	Live     *runtime.Status `json:"live,omitempty"`
	EnvState []envState      `json:"env_state,omitempty"`
	Graph    runtime.Node    `json:"graph"`
	// ActsFor, for an uplink capsule, are the principals it may act for:
	// "*" for a built-in, else the operator's [uplink] acts_for entries.
	ActsFor *[]string `json:"acts_for,omitempty"`
}

// envState is whether one [env] key has a value, never the value itself.
type envState struct {
	Key string `json:"key"`
	// State is "stored", "stored (secret)", "from env NAME", "default",
	// "the only choice" or "missing (required): …" (a daemon asks each
	// principal for it on first use; in-process the load fails).
	State string `json:"state"`
}

func newCapsuleShowCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show <name>",
		Short: "Show one capsule: manifest, grants, env values set, dependencies and live state",
		Long: `Shows everything known of one capsule, built-in or installed: its manifest as
` + "`capsule check`" + ` reports it (engines, ACL, grants ranked by risk, tools), which [env]
values are set (stored, a default, or missing; values are never printed), what it
imports and from whom, who depends on it, and, when a daemon runs, its live state
and last error as ` + "`capsule list`" + ` shows them.

Exit status: 0 shown; 1 no such capsule (the known ones are named).`,
		Example: `  astrid capsule show hello
  astrid capsule show astrid-capsule-openai --json | jq .env_state`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := cobra.ExactArgs(1)(cmd, args); err != nil {
				return usage(cmd, err)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			home, err := config.Home()
			if err != nil {
				return err
			}
			cands, problems, err := discoverCapsules(home)
			if err != nil {
				return err
			}
			var c *runtime.Candidate
			var known []string
			for _, x := range cands {
				known = append(known, x.ID())
				if x.ID() == args[0] {
					c = x
				}
			}
			if c == nil {
				for _, p := range problems {
					if p.ID == args[0] {
						return fmt.Errorf("capsule %s (%s) cannot be read: %w", p.ID, p.Dir, p.Err)
					}
				}
				return fmt.Errorf("no capsule %s; the capsules are: %s", args[0], strings.Join(known, ", "))
			}
			show := capsuleShow{Description: c.Manifest.Package.Description, Builtin: c.Builtin(), Dir: c.Dir}
			path := "built-in"
			if c.Dir != "" {
				path = c.Dir
			}
			if c.Dir != "" {
				show.checkReport = newCheckReport(c.Dir, false)
			} else {
				show.checkReport = checkReportOf(path, c.Manifest, nil, false)
			}
			for _, n := range runtime.Graph(cands) {
				if n.ID == c.ID() {
					show.Graph = n
				}
			}
			show.EnvState = envStates(home, c.Manifest)
			if c.Manifest.Capabilities.Uplink {
				who := uplinkActsFor(home, c)
				show.ActsFor = &who
			}
			show.Live = liveCapsule(cmd.Context(), home, c.ID())
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), show)
			}
			writeShow(cmd.OutOrStdout(), show)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the capsule as JSON")
	return cmd
}

// uplinkActsFor is whom uplink capsule c may act for: anyone for a
// built-in (it maps its own peers), else what config.toml's [uplink]
// acts_for names for it.
func uplinkActsFor(home string, c *runtime.Candidate) []string {
	if c.Builtin() {
		return []string{config.AnyPrincipal}
	}
	cfg, err := config.Load(config.Layout(home).Config)
	if err != nil {
		return []string{}
	}
	m, err := cfg.Uplink.ActsForByCapsule()
	if err != nil || m[c.ID()] == nil {
		return []string{}
	}
	return m[c.ID()]
}

// envStates says which of m's [env] keys have a value, reading the store
// only when it exists (show creates nothing).
func envStates(home string, m *manifest.Manifest) []envState {
	var st *store.Store
	if _, err := os.Stat(config.Layout(home).State); err == nil {
		if s, err := store.Open(config.Layout(home).State, store.Options{}); err == nil {
			st = s
			defer st.Close()
		}
	}
	var secrets []string
	if st != nil {
		secrets, _ = st.Secrets(m.ID()).List()
	}
	var out []envState
	for _, e := range m.Env {
		state := "missing (required): a daemon asks each principal on first use; set it for everyone with astrid capsule env set " + m.ID() + " " + e.Key
		switch {
		case slices.Contains(secrets, e.Key):
			state = "stored (secret)"
		case st != nil && hasConfig(st, m.ID(), e.Key):
			state = "stored"
		case providerEnv[m.ID()][e.Key] != "" && os.Getenv(providerEnv[m.ID()][e.Key]) != "":
			state = "from env " + providerEnv[m.ID()][e.Key]
		case e.Default != nil:
			state = "default"
		case !e.Required():
			state = "the only choice"
		}
		out = append(out, envState{Key: e.Key, State: state})
	}
	return out
}

func hasConfig(st *store.Store, id, key string) bool {
	_, found, err := st.Config(id).Get(key)
	return err == nil && found
}

// liveCapsule is the running daemon's status of capsule id; nil when no
// daemon runs or it does not answer.
func liveCapsule(ctx context.Context, home, id string) *runtime.Status {
	if _, err := daemon.Running(home); errors.Is(err, daemon.ErrNotRunning) || err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := dialDaemon(ctx, home)
	if err != nil {
		return nil
	}
	defer c.Close()
	var list []runtime.Status
	if err := c.Query(uplinkwire.QueryCapsules, &list); err != nil {
		return nil
	}
	for i := range list {
		if list[i].ID == id {
			return &list[i]
		}
	}
	return nil
}

func writeShow(w io.Writer, s capsuleShow) {
	if s.Description != "" {
		fmt.Fprintf(w, "%s: %s\n", s.ID, s.Description)
	}
	s.writeText(w)
	if s.Live != nil {
		line := s.Live.State
		if s.Live.Error != "" {
			line += ": " + s.Live.Error
		}
		fmt.Fprintf(w, "  live:         %s (the running daemon)\n", line)
	} else {
		fmt.Fprintln(w, "  live:         no daemon runs (astrid capsule list boots the capsules to see them run)")
	}
	if s.ActsFor != nil {
		who := strings.Join(*s.ActsFor, ", ")
		switch {
		case len(*s.ActsFor) == 0:
			who = fmt.Sprintf("(nobody: the operator names principals in config.toml, [uplink] acts_for = [\"%s=<principal>\"])", s.ID)
		case slices.Contains(*s.ActsFor, config.AnyPrincipal):
			who = "anyone"
		}
		fmt.Fprintf(w, "  %-13s %s\n", "acts for:", who)
	}
	var env []string
	for _, e := range s.EnvState {
		env = append(env, e.Key+": "+e.State)
	}
	list(w, "env values", env, "none declared")
	var deps []string
	for _, d := range s.Graph.Imports {
		if len(d.Providers) > 0 {
			deps = append(deps, d.Name+" from "+strings.Join(d.Providers, ", "))
		} else {
			deps = append(deps, d.Name+": not met ("+d.Unmet+")")
		}
	}
	list(w, "depends on", deps, "nothing")
	list(w, "needed by", s.Graph.Dependents, "nothing")
	if s.Graph.Problem != "" {
		fmt.Fprintf(w, "  !! does not load: %s\n", s.Graph.Problem)
	}
}
