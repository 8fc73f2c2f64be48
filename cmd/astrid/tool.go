package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/store"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/ipc"
)

// kernelFlags are the flags of every command that boots a kernel in-process.
type kernelFlags struct {
	workspace string
	principal string
	// background: boot returns once the built-ins are loaded (not a flag;
	// a command that waits for what it needs sets it).
	background bool
	// person, when it has a terminal, is asked for the required [env]
	// values a capsule has none of while the kernel loads (not a flag;
	// the commands that ask a person questions set it).
	person *approver
}

func (f *kernelFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.workspace, "workspace", "", "directory the tools work on (default: the current directory)")
	cmd.Flags().StringVar(&f.principal, "principal", ipc.DefaultPrincipal, "principal the call acts for")
}

// bootKernel boots a kernel for one command; Ctrl-C or SIGTERM cancels ctx,
// and the returned stop function unloads everything.
func bootKernel(cmd *cobra.Command, f kernelFlags) (*kernel.Kernel, context.Context, func(), error) {
	if err := ipc.ValidatePrincipal(f.principal); err != nil {
		return nil, nil, nil, fmt.Errorf("--principal: %w", err)
	}
	home, err := config.Home()
	if err != nil {
		return nil, nil, nil, err
	}
	cfg, err := config.Load(filepath.Join(home, "config.toml"))
	if err != nil {
		return nil, nil, nil, err
	}
	ws, err := clientWorkspace(f.workspace, home)
	if err != nil {
		return nil, nil, nil, usage(cmd, err)
	}
	if _, err := clientEnv(); err != nil {
		return nil, nil, nil, usage(cmd, err)
	}
	logger, closeLog := cliLogger(cmd, home, cfg.SlogLevel())
	warnUnconfined(cmd, cfg.Sandbox)
	ctx, cancel := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	k, err := kernel.Boot(ctx, kernel.Options{
		Home: home, Workspace: ws, Config: cfg, Logger: logger, Builtins: builtins(), Frontends: frontends(),
		LoadInBackground: f.background, ConfigFallback: withHooks(configFallback(os.Getenv), cfg.Hooks),
		AskEnv: f.askEnv(), WasmCache: wasmCache,
	})
	if err != nil {
		interrupted := ctx.Err() != nil
		cancel()
		closeLog()
		if interrupted {
			// Ctrl-C while a capsule loaded (a person asked for an
			// [env] value): an interruption, not a failure.
			fmt.Fprintln(cmd.ErrOrStderr(), "astrid: interrupted while the capsules loaded")
			return nil, nil, nil, exitError{code: 130}
		}
		return nil, nil, nil, err
	}
	return k, ctx, func() { k.Close(); cancel(); closeLog() }, nil
}

// askEnv is the kernel's EnvAsker: the person's terminal, when there is
// one.
func (f kernelFlags) askEnv() kernel.EnvAsker {
	if f.person == nil || f.person.tty == nil {
		return nil
	}
	return f.person.askEnv
}

func newToolCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tool",
		Short: "Call and list the tools capsules provide",
	}
	cmd.AddCommand(newToolCallCmd(), newToolListCmd())
	return cmd
}

func newToolCallCmd() *cobra.Command {
	var f kernelFlags
	var timeout time.Duration
	var asJSON, yes, unconfined bool
	cmd := &cobra.Command{
		Use:   "call <name> ['<json arguments>' | - | @file]",
		Short: "Call a tool through the bus, as an agent would",
		Long: `Talks to the running daemon of $ASTRID_HOME (astrid start), or boots a kernel
in-process when none runs or --no-daemon is given; publishes tool.v1.request.execute with a fresh call id,
and prints the tool's result. The router forwards the call to the capsule that provides
the tool; every file or network effect is checked against that capsule's grants.
A tool that changes things (mutable) is held by the approval capsule until a person
allows it: in a terminal you are asked; without one the call is denied unless --yes.
Installed capsules load in the background: the call waits (within --timeout) only for
those that may provide the tool, so a capsule slow to start does not delay other tools.

The arguments are one JSON value (default {}): given inline, or "-" to read them from
standard input, or "@file" to read them from a file. A shell argument cannot exceed
128 KiB; from stdin or a file they may take up to 1 MiB, the largest bus message.

Exit status: 0 on success; 1 when the tool answered is_error, nobody provides it or the
call could not start (a start refused over the CPU budget, say);
2 on a timeout or a usage error (invalid JSON arguments included); 75 when another
astrid process kept the state database busy past store_lock_wait; 130 when interrupted
(Ctrl-C cancels the call and unloads every capsule before exiting).`,
		Example: `  astrid tool call read_file '{"file_path":"README.md"}'
  astrid tool call list_directory '{"dir_path":"."}' --workspace /tmp/project
  astrid tool call grep_search '{"pattern":"TODO"}' --timeout 10s
  astrid tool call write_file @args.json
  jq -n --rawfile c big.txt '{file_path:"copy.txt",content:$c}' | astrid tool call write_file -`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := cobra.RangeArgs(1, 2)(cmd, args); err != nil {
				return usage(cmd, err)
			}
			// Checked here, as the router would, so a bad name is quoted
			// briefly once and nothing boots for it.
			if err := ipc.ValidateToolName(args[0]); err != nil {
				return usage(cmd, err)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var raw json.RawMessage = json.RawMessage("{}")
			if len(args) == 2 {
				var err error
				if raw, err = toolArguments(args[1], cmd.InOrStdin()); err != nil {
					return usage(cmd, err)
				}
			}
			f.background = true
			approve := newApprover(yes, cmd.ErrOrStderr())
			approve.unconfined = unconfined
			f.person = approve
			fe, ctx, stop, err := openFrontend(cmd, f)
			if err != nil {
				return err
			}
			defer stop()
			// Only the capsules that may provide this tool are waited for
			// (the router is a built-in, loaded by now): a capsule slow to
			// get ready delays its own tools, not this call. The wait counts
			// against the call's timeout.
			res, err := waitAndCall(ctx, fe, f.principal, args[0], raw, timeout, approve.decide, approve.elicit)
			if err != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), "astrid:", err)
				return exitError{code: callExitCode(err)}
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(res); err != nil {
					return err
				}
			} else {
				out := cmd.OutOrStdout()
				if res.IsError {
					out = cmd.ErrOrStderr()
				}
				writeContent(out, res.Content)
			}
			if res.IsError {
				return exitError{code: 1}
			}
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().DurationVar(&timeout, "timeout", 60*time.Second, "how long to wait for the result")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the whole result as JSON")
	cmd.Flags().BoolVar(&yes, "yes", false, "approve the call if the approval layer asks (a mutable tool); never a process outside the sandbox")
	cmd.Flags().BoolVar(&unconfined, dangerouslyUnconfined, false, "with --yes, also approve running a process OUTSIDE the sandbox if the tool asks to (full authority over your files, network and processes)")
	return cmd
}

// usage reports a usage error and exits with status 2, as the help says.
func usage(cmd *cobra.Command, err error) error {
	fmt.Fprintln(cmd.ErrOrStderr(), "astrid:", err)
	return exitError{code: 2}
}

func writeContent(w io.Writer, s string) {
	fmt.Fprint(w, s)
	if len(s) > 0 && s[len(s)-1] != '\n' {
		fmt.Fprintln(w)
	}
}

func newToolListCmd() *cobra.Command {
	var f kernelFlags
	var window time.Duration
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List every tool the loaded capsules provide",
		Long: `Prints a table of the tools: name, capsule, whether it changes things (mutable, so
asked about before it runs) and its description, cut to fit 100 columns. -v adds each
tool's whole description and input schema; --json prints everything as JSON.
On a bus spanning hosts (docs/nats.md), a HOST column names the host serving each
tool another host serves ("local" for this one's); a tool served both here and
elsewhere is listed once, as this host's.

Runs the describe protocol: publishes tool.v1.request.describe and collects each
capsule's answer on tool.v1.response.describe.<capsule>, finishing as soon as every
capsule that intercepts the request has answered (or --window passes; late capsules
are named on stderr).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fe, ctx, stop, err := openFrontend(cmd, f)
			if err != nil {
				return err
			}
			defer stop()
			tools, missing, err := toolclient.ListTools(ctx, fe.k, f.principal, window)
			if err != nil {
				return err
			}
			for _, id := range missing {
				fmt.Fprintf(cmd.ErrOrStderr(), "astrid: capsule %s did not answer the describe request within %s\n", id, window)
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(tools)
			}
			header, rows := toolTable(tools)
			if err := writeTable(cmd.OutOrStdout(), header, rows); err != nil {
				return err
			}
			if verbose, _ := cmd.Flags().GetBool(verboseFlag); verbose {
				for _, t := range tools {
					fmt.Fprintf(cmd.OutOrStdout(), "\n%s: %s\n%s schema: %s\n", t.Name, t.Description, t.Name, t.InputSchema)
				}
			}
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().DurationVar(&window, "window", 2*time.Second, "upper bound on waiting for describe answers")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the tools as JSON")
	return cmd
}

// toolTable is the header and rows of `tool list`: a HOST column, after
// CAPSULE, when a tool is served by another host (a bus spanning hosts),
// with "local" for this host's own tools.
func toolTable(tools []toolclient.ToolInfo) ([]string, [][]string) {
	remote := false
	for _, t := range tools {
		remote = remote || t.Host != ""
	}
	header := []string{"TOOL", "CAPSULE", "MUTABLE", "DESCRIPTION"}
	if remote {
		header = []string{"TOOL", "CAPSULE", "HOST", "MUTABLE", "DESCRIPTION"}
	}
	rows := make([][]string, 0, len(tools))
	for _, t := range tools {
		mutable := "no"
		if t.Mutable {
			mutable = "yes"
		}
		row := []string{t.Name, t.Capsule, mutable, t.Description}
		if remote {
			host := t.Host
			if host == "" {
				host = "local"
			}
			row = []string{t.Name, t.Capsule, host, mutable, t.Description}
		}
		rows = append(rows, row)
	}
	return header, rows
}

// waitAndCall waits, within timeout, for the capsules that may provide
// tool name to finish loading, then makes the call with what is left of
// timeout.
func waitAndCall(ctx context.Context, fe frontend, principal, name string, args json.RawMessage, timeout time.Duration, approve toolclient.Approver, elicit toolclient.Elicitor) (ipc.ToolCallResult, error) {
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, timeout)
	err := fe.waitForTool(wctx, name)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return ipc.ToolCallResult{}, fmt.Errorf("tool %s: %w", name, ctx.Err())
		}
		return ipc.ToolCallResult{}, fmt.Errorf("tool %s: timed out: %w", name, err)
	}
	left := timeout - time.Since(start)
	if left <= 0 {
		return ipc.ToolCallResult{}, fmt.Errorf("tool %s: timed out waiting for its capsule to load: %w", name, context.DeadlineExceeded)
	}
	return callInterruptibly(ctx, fe.k, principal, name, args, left, approve, elicit)
}

// callInterruptibly makes the call on its own goroutine so that Ctrl-C ends
// the command even when a handler cannot be interrupted: the call's own
// goroutine may be running the handlers (dispatch.Runner), and native code
// stuck in a system call (a read of a hung mount) does not return. After an
// interrupt the call gets the unload grace to end, then the command reports
// the interruption anyway.
func callInterruptibly(ctx context.Context, k toolclient.Kernel, principal, name string, args json.RawMessage, timeout time.Duration, approve toolclient.Approver, elicit toolclient.Elicitor) (ipc.ToolCallResult, error) {
	type outcome struct {
		res ipc.ToolCallResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := toolclient.CallToolAsking(ctx, k, principal, name, args, timeout, approve, elicit)
		done <- outcome{res, err}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-ctx.Done():
	}
	select {
	case o := <-done:
		return o.res, o.err
	case <-time.After(dispatch.DefaultUnregisterGrace):
		return ipc.ToolCallResult{}, fmt.Errorf("tool %s: interrupted; the call was cancelled but had not ended %s later: %w", name, dispatch.DefaultUnregisterGrace, context.Canceled)
	}
}

// callExitCode is the exit status of a tool call that failed without an
// answer: 130 interrupted, 2 timed out, 75 the state database stayed busy,
// else 1 (no router, a start refused over the CPU budget, a publish
// refused): the call failed.
func callExitCode(err error) int {
	switch {
	case errors.Is(err, context.Canceled):
		return 130 // as a shell reports SIGINT
	case errors.Is(err, context.DeadlineExceeded):
		return 2
	case errors.Is(err, store.ErrInUse):
		return exitStoreBusy
	}
	return 1
}
