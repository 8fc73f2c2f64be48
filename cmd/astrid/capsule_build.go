package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/capsulebuild"
	"github.com/astrid-go/astrid/manifest"
)

func init() {
	capsuleSubcommands = append(capsuleSubcommands, newCapsuleBuildCmd)
}

func newCapsuleBuildCmd() *cobra.Command {
	var out, sdkDir string
	var library bool
	cmd := &cobra.Command{
		Use:   "build <dir>",
		Short: "Build a Go capsule to wasm and record its sha256 in meta.json",
		Long: "build compiles the Go package in <dir> (which exports New() *sdk.Capsule) to a wasm module\n" +
			"for the wasm engine: a generated main shim serves the capsule, GOOS=wasip1 GOARCH=wasm,\n" +
			"-buildmode=c-shared, CGO_ENABLED=0, GOFLAGS cleared. The module is written to the file of the\n" +
			"manifest's executable [[component]] (default <capsule id>.wasm) and its sha256 to <dir>/meta.json.\n" +
			"A capsule in another module builds against this checkout's sdk (or --sdk) through a generated go.work.\n\n" +
			"With --library, <dir> is the Go package of a library [[component]] (it needs no Capsule.toml): the\n" +
			"module is written to -o and its sha256 printed, to set as that component's hash; no meta.json is\n" +
			"written, since meta.json vouches for the executable component only.",
		Example: "  astrid capsule build ./hello\n  astrid capsule build --library ./hello/strings -o ./hello/strings.wasm",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if library {
				return buildLibrary(cmd, dir, out, sdkDir)
			}
			m, diags := manifest.Load(dir)
			if m == nil {
				return fmt.Errorf("capsule build: %v", diags)
			}
			if out == "" {
				if c := m.ExecutableComponent(); c != nil {
					out = filepath.Join(dir, filepath.FromSlash(c.File))
				} else {
					out = filepath.Join(dir, m.ID()+".wasm")
				}
			}
			r, err := capsulebuild.Build(cmd.Context(), capsulebuild.Options{Dir: dir, Out: out, SDKDir: sdkDir, Stderr: cmd.ErrOrStderr()})
			if err != nil {
				return err
			}
			if err := capsulebuild.WriteMeta(dir, r); err != nil {
				return fmt.Errorf("capsule build: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "built %s\n%s\n", r.Wasm, r.SHA256)
			if c := m.ExecutableComponent(); c != nil && c.Hash != "" && c.Hash != r.SHA256 {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: [[component]] hash in %s is %s; update it to %s or remove it (meta.json vouches for the module)\n",
					filepath.Join(dir, manifest.FileName), c.Hash, r.SHA256)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the .wasm file to write (default: the [[component]] file, else <capsule id>.wasm in <dir>)")
	cmd.Flags().BoolVar(&library, "library", false, "build a library component's package to -o and print the hash to set on its [[component]]")
	cmd.Flags().StringVar(&sdkDir, "sdk", "", "the astrid checkout to build against when the capsule is in another module (default: the one this binary was built from)")
	return cmd
}

// buildLibrary builds the Go package dir of a library component to out.
func buildLibrary(cmd *cobra.Command, dir, out, sdkDir string) error {
	if out == "" {
		return usage(cmd, fmt.Errorf("--library needs -o, the component's file in the capsule directory"))
	}
	r, err := capsulebuild.Build(cmd.Context(), capsulebuild.Options{Dir: dir, Out: out, SDKDir: sdkDir, Stderr: cmd.ErrOrStderr()})
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "built %s\n%s\n", r.Wasm, r.SHA256)
	fmt.Fprintf(cmd.ErrOrStderr(), "set hash = %q on its [[component]] (type = \"library\") in Capsule.toml\n", r.SHA256)
	return nil
}
