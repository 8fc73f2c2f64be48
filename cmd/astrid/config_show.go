package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/config"
)

func newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the effective configuration and where each value comes from",
	}
	cmd.AddCommand(newConfigShowCmd())
	return cmd
}

// configShow is what `astrid config show --json` prints.
type configShow struct {
	Home       string           `json:"home"`
	HomeSource string           `json:"home_source"`
	Settings   []config.Setting `json:"settings"`
	// CapsuleEnv are capsule [env] values the environment fills in where
	// the capsule has none stored (secrets shown as "(set)").
	CapsuleEnv []config.Setting `json:"capsule_env,omitempty"`
}

func newConfigShowCmd() *cobra.Command {
	var nf natsFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print every config.toml key's effective value and its source",
		Long: `Prints every key of config.toml with the value a daemon or command started now would
use, and where that value comes from:

  default           config.toml does not set it
  <path>:<line>     config.toml sets it on that line
  flag              a flag given to this command (the daemon's --nats-* flags: what
                    ` + "`astrid daemon`" + ` with the same flags would run with)
  env <NAME>        an environment variable

$ASTRID_HOME itself is shown first (env ASTRID_HOME, or the default ~/.astrid), and
last the capsule [env] values the environment fills in where none is stored
(OPENAI_API_KEY, ANTHROPIC_BASE_URL, ...); secrets are shown as (set), never printed.

A config.toml that does not decode is reported at file:line:col, as every command
would.

Exit status: 0 printed; 1 config.toml has a problem.`,
		Example: `  astrid config show
  astrid config show --json | jq -r '.settings[] | select(.source != "default") | .key'
  astrid config show --nats-url nats://10.0.0.2:4222   # what the daemon would run with`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			home, err := config.Home()
			if err != nil {
				return err
			}
			path := config.Layout(home).Config
			cfg, err := config.Load(path)
			if err != nil {
				return err
			}
			nf.apply(cmd, &cfg)
			settings, err := config.Settings(path, cfg, config.SourceFlag)
			if err != nil {
				return err
			}
			show := configShow{Home: home, HomeSource: config.SourceDefault, Settings: settings, CapsuleEnv: capsuleEnvFromEnviron(os.Getenv)}
			if os.Getenv(config.HomeEnv) != "" {
				show.HomeSource = config.SourceEnv + " " + config.HomeEnv
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(show)
			}
			return writeConfigShow(cmd, show)
		},
	}
	nf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {home, home_source, settings: [{key, value, source}], capsule_env} as JSON")
	return cmd
}

// capsuleEnvFromEnviron lists the provider capsules' [env] values the
// environment supplies (providerEnv), secrets masked.
func capsuleEnvFromEnviron(getenv func(string) string) []config.Setting {
	var out []config.Setting
	for id, keys := range providerEnv {
		for key, name := range keys {
			v := getenv(name)
			if v == "" {
				continue
			}
			if strings.Contains(key, "key") || strings.Contains(key, "token") || strings.Contains(key, "secret") {
				v = "(set)"
			}
			out = append(out, config.Setting{Key: id + "." + key, Value: fmt.Sprintf("%q", v), Source: config.SourceEnv + " " + name})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// writeConfigShow prints key = value lines with the source as a comment,
// aligned, readable as TOML.
func writeConfigShow(cmd *cobra.Command, show configShow) error {
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "# $ASTRID_HOME = %s  (%s)\n", show.Home, show.HomeSource)
	write := func(list []config.Setting) {
		width := 0
		for _, s := range list {
			width = max(width, len(s.Key)+3+len(s.Value))
		}
		width = min(width, 60)
		for _, s := range list {
			line := s.Key + " = " + s.Value
			fmt.Fprintf(w, "%-*s  # %s\n", width, line, s.Source)
		}
	}
	write(show.Settings)
	if len(show.CapsuleEnv) > 0 {
		fmt.Fprintln(w, "\n# capsule [env] values from the environment (used where `astrid capsule env set` stored none)")
		write(show.CapsuleEnv)
	}
	return nil
}
