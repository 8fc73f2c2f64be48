package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/sandbox"
)

// warnUnconfined says on the terminal, at every start of an in-process
// kernel, that processes will not be confined; the log alone is not seen
// (DESIGN §11).
func warnUnconfined(cmd *cobra.Command, s config.Sandbox) {
	if n := kernel.SandboxNotice(s); n != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "astrid: warning: %s\n", n)
	}
}

func newSandboxCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "What confines the processes capsules start, on this machine",
		Long: `Every process a capsule starts (shell commands, background processes, MCP servers)
runs inside that capsule's grants, enforced by the kernel: Landlock for files and TCP,
seccomp for the rest, no capabilities, no new privileges (docs/sandbox.md).
config.toml [sandbox] mode = "enforce" (the default) or "off".`,
	}
	cmd.AddCommand(newSandboxCheckCmd())
	return cmd
}

func newSandboxCheckCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "check",
		Short: "Say what this machine enforces and run a self-test of confined commands",
		Long: `Prints the kernel's Landlock ABI, whether the seccomp filter exists for this
architecture, the mode config.toml sets, then confines a few commands in a scratch
directory and checks that granted work runs and each escape (Astrid's home, files
outside the grants, TCP, UDP, signals, another process's /proc) is refused.

Exit status: 0 when processes are confined as promised; 1 when this machine cannot
confine them, a self-test step failed, or [sandbox] mode = "off".`,
		Example: "  astrid sandbox check",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			mode := config.SandboxEnforce
			if home, err := config.Home(); err == nil {
				cfg, err := config.Load(filepath.Join(home, "config.toml"))
				if err != nil {
					return err
				}
				mode = cfg.Sandbox.Mode
			}
			abi := sandbox.ABI()
			fmt.Fprintf(out, "kernel:   Landlock ABI %d (confinement needs %d)\n", abi, sandbox.MinABI)
			fmt.Fprintf(out, "arch:     %s/%s\n", runtime.GOOS, runtime.GOARCH)
			fmt.Fprintf(out, "mode:     %s (config.toml [sandbox] mode)\n", mode)
			failed := false
			if err := sandbox.Need(abi); err != nil {
				fmt.Fprintf(out, "cannot confine: %v\n", err)
				return exitError{1}
			}
			checks, err := sandbox.SelfTest(os.TempDir())
			if err != nil {
				fmt.Fprintf(out, "self-test: %v\n", err)
				return exitError{1}
			}
			fmt.Fprintln(out, "self-test:")
			for _, c := range checks {
				mark := "ok  "
				if !c.OK {
					mark, failed = "FAIL", true
				}
				fmt.Fprintf(out, "  %s %s", mark, c.What)
				if c.Got != "" {
					fmt.Fprintf(out, " (%s)", c.Got)
				}
				fmt.Fprintln(out)
			}
			switch {
			case failed:
				fmt.Fprintln(out, "confinement does NOT hold on this machine as promised")
				return exitError{1}
			case config.Sandbox{Mode: mode}.Off():
				fmt.Fprintln(out, `this machine can confine, but [sandbox] mode = "off": processes run unconfined`)
				return exitError{1}
			}
			fmt.Fprintln(out, "processes capsules start are confined")
			return nil
		},
	}
}
