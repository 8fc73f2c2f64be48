package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/runtime"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/manifest"
)

func init() {
	capsuleSubcommands = append(capsuleSubcommands, newCapsuleEnvCmd)
}

func newCapsuleEnvCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "env",
		Short: "Set the [env] values a capsule declares",
	}
	cmd.AddCommand(newCapsuleEnvSetCmd())
	return cmd
}

func newCapsuleEnvSetCmd() *cobra.Command {
	var principal string
	cmd := &cobra.Command{
		Use:   "set <capsule> <KEY>",
		Short: "Set one [env] value of a capsule, read from standard input",
		Long: `Stores the value of KEY, which the capsule must declare in its [env] table. The value
is read from standard input (one line from a terminal, everything when piped; a final
newline is dropped), never from the command line, where other users and the shell
history would see it. A secret (type = "secret") is sealed with the secrets key; other
values are stored as plain configuration. A select value must be one of its enum_values.
The capsule sees the new value the next time it loads.

With --principal the value is that principal's own: the capsule reads it, for that
principal's calls, before the capsule-wide value, which stays everyone else's fallback.
It applies at once, also in a running daemon. A daemon asks a principal itself for a
required value nobody set, through the principal's chat or terminal, and keeps the
answer the same way.`,
		Example: `  printf %s "$OPENAI_API_KEY" | astrid capsule env set openai API_KEY
  astrid capsule env set openai REGION     # then type the value
  astrid capsule env set --principal alice openai API_KEY`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, key := args[0], args[1]
			home, err := config.Home()
			if err != nil {
				return err
			}
			def, err := envDefinition(home, id, key)
			if err != nil {
				return err
			}
			value, err := readEnvValue(cmd, def)
			if err != nil {
				return err
			}
			if err := checkEnvValue(def, value); err != nil {
				return fmt.Errorf("capsule %s: %s: %w", id, key, err)
			}
			cfg, err := config.Load(config.Layout(home).Config)
			if err != nil {
				return err
			}
			st, err := store.Open(config.Layout(home).State, store.Options{Timeout: cfg.StoreLockWait.Duration})
			if err != nil {
				return err
			}
			if principal != "" {
				err = st.SetPrincipalEnv(principal, id, def.Key, def.Type == manifest.EnvSecret, []byte(value))
			} else {
				err = storeEnvValue(st, id, def, value)
			}
			if cerr := st.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			kind := "value"
			if def.Type == manifest.EnvSecret {
				kind = "secret"
			}
			if principal != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "astrid: %s %s of capsule %s stored for principal %s; it applies to their next call\n", kind, key, id, principal)
				return nil
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "astrid: %s %s of capsule %s stored; it applies when the capsule next loads\n", kind, key, id)
			return nil
		},
	}
	cmd.Flags().StringVar(&principal, "principal", "", "store the value for this principal only (the capsule-wide value stays the fallback)")
	return cmd
}

// envDefinition finds KEY in the [env] of capsule id, among the capsules
// the kernel would load.
func envDefinition(home, id, key string) (manifest.EnvVar, error) {
	cands, problems, err := runtime.Discover(runtimeBuiltins(), config.Layout(home).Capsules)
	if err != nil {
		return manifest.EnvVar{}, err
	}
	idx := slices.IndexFunc(cands, func(c *runtime.Candidate) bool { return c.ID() == id })
	if idx < 0 {
		for _, p := range problems {
			if p.ID == id {
				return manifest.EnvVar{}, fmt.Errorf("capsule %s cannot be loaded: %w", id, p.Err)
			}
		}
		return manifest.EnvVar{}, fmt.Errorf("no capsule %s among the built-ins and %s", id, config.Layout(home).Capsules)
	}
	m := cands[idx].Manifest
	var keys []string
	for _, e := range m.Env {
		if e.Key == key {
			return e, nil
		}
		keys = append(keys, e.Key)
	}
	if len(keys) == 0 {
		return manifest.EnvVar{}, fmt.Errorf("capsule %s declares no [env] values", id)
	}
	return manifest.EnvVar{}, fmt.Errorf("capsule %s declares no [env] key %s (it declares %s)", id, key, strings.Join(keys, ", "))
}

// readEnvValue reads the value from stdin: one line from a terminal (after
// a prompt), else everything, without its final newline.
func readEnvValue(cmd *cobra.Command, def manifest.EnvVar) (string, error) {
	in := cmd.InOrStdin()
	if f, ok := in.(*os.File); ok && isTerminal(f) {
		prompt := def.Request
		if prompt == "" {
			prompt = "Value of " + def.Key
		}
		if def.Type == manifest.EnvSecret {
			fmt.Fprintln(cmd.ErrOrStderr(), "astrid: the value will show as you type; to hide it, pipe it in instead")
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: ", prompt)
		line, err := bufio.NewReader(f).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("read the value: %w", err)
		}
		return trimNewline(line), nil
	}
	data, err := io.ReadAll(io.LimitReader(in, 1<<20+1))
	if err != nil {
		return "", fmt.Errorf("read the value from standard input: %w", err)
	}
	if len(data) > 1<<20 {
		return "", errors.New("the value on standard input is over 1 MiB")
	}
	return trimNewline(string(data)), nil
}

func trimNewline(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return strings.TrimSuffix(s, "\r")
}

// checkEnvValue validates value against its [env] definition.
func checkEnvValue(def manifest.EnvVar, value string) error {
	if value == "" {
		return errors.New("the value is empty (nothing was read from standard input)")
	}
	return def.Check(value)
}

// storeEnvValue keeps a key in exactly one place: the sealed secrets for a
// secret, the plain configuration otherwise.
func storeEnvValue(st *store.Store, id string, def manifest.EnvVar, value string) error {
	return st.SetEnv(id, def.Key, def.Type == manifest.EnvSecret, []byte(value))
}
