package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/capsule"
	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/daemonclient"
	"github.com/astrid-go/astrid/internal/kernel"
	"github.com/astrid-go/astrid/internal/runtime"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/internal/uplinkwire"
	"github.com/astrid-go/astrid/ipc"
)

// noDaemonFlag is the global flag that forces a command to boot its kernel
// in-process even when a daemon runs for $ASTRID_HOME.
const noDaemonFlag = "no-daemon"

// frontend is the kernel a client command talks to: the daemon's, over its
// socket, or one booted in-process for this command. toolclient.Kernel is
// the widest of the client packages' Kernel interfaces, so k serves the
// tool, agent, registry and session clients alike.
type frontend struct {
	k toolclient.Kernel
	// local is the in-process kernel; nil through the daemon.
	local *kernel.Kernel
	// remote is the daemon connection; nil in-process.
	remote *daemonclient.Client
}

// waitForTool waits for the capsules that may provide tool name to finish
// loading. In-process they load in the background; a daemon has loaded
// its capsules by the time its socket serves, so there is nothing to wait
// for.
func (fe frontend) waitForTool(ctx context.Context, name string) error {
	if fe.local == nil {
		return nil
	}
	return fe.local.Runtime.WaitForTool(ctx, name)
}

// sayUnloaded names on w each installed capsule an in-process boot could
// not load, so a turn that goes on without its tools says so. Through the
// daemon its log and `astrid capsule list` say it.
func (fe frontend) sayUnloaded(w io.Writer) {
	if fe.local == nil {
		return
	}
	sayUnloaded(w, fe.local.Runtime.List())
}

// sayUnloaded names each installed capsule of list that is not ready.
func sayUnloaded(w io.Writer, list []runtime.Status) {
	for _, s := range list {
		if s.Builtin || s.State == capsule.Ready.String() {
			continue
		}
		fmt.Fprintf(w, "astrid: capsule %s did not load, so its tools are not offered: %s (astrid capsule list)\n", s.ID, oneLine(s.Error, 300))
	}
}

// openFrontend is the one seam between a client command and a kernel: the
// running daemon of $ASTRID_HOME when there is one (and --no-daemon is not
// given), else a kernel booted in-process as bootKernel does. Ctrl-C or
// SIGTERM cancels ctx; stop closes the connection or unloads the kernel.
func openFrontend(cmd *cobra.Command, f kernelFlags) (frontend, context.Context, func(), error) {
	noDaemon, _ := cmd.Flags().GetBool(noDaemonFlag)
	if !noDaemon {
		fe, ctx, stop, err := attachDaemon(cmd, f)
		switch {
		case err == nil:
			return fe, ctx, stop, nil
		case !errors.Is(err, daemonclient.ErrNoDaemon):
			return frontend{}, nil, nil, err
		}
	}
	k, ctx, stop, err := bootKernel(cmd, f)
	if err != nil {
		return frontend{}, nil, nil, err
	}
	return frontend{k: k.Frontend(), local: k}, ctx, stop, nil
}

// attachDaemon connects to the daemon of $ASTRID_HOME; errors.Is(err,
// daemonclient.ErrNoDaemon) when none runs. The connection works on this
// command's workspace (--workspace, else the current directory) with the
// provider settings of its environment, as an in-process kernel would
// (DESIGN §8). The daemon maps this user to a principal, so a --principal
// that differs is refused rather than silently ignored (docs/rationale/daemon.md,
// "Why does a client command refuse a --principal ...").
func attachDaemon(cmd *cobra.Command, f kernelFlags) (frontend, context.Context, func(), error) {
	if err := ipc.ValidatePrincipal(f.principal); err != nil {
		return frontend{}, nil, nil, fmt.Errorf("--principal: %w", err)
	}
	home, err := config.Home()
	if err != nil {
		return frontend{}, nil, nil, err
	}
	ws, err := clientWorkspace(f.workspace, home)
	if err != nil {
		return frontend{}, nil, nil, usage(cmd, err)
	}
	env, err := clientEnv()
	if err != nil {
		return frontend{}, nil, nil, usage(cmd, err)
	}
	ctx, cancel := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	// An explicit --principal asks the daemon for it; it is honoured only
	// among the principals config.toml maps this uid to.
	asked := ""
	if fl := cmd.Flags().Lookup("principal"); fl != nil && fl.Changed {
		asked = f.principal
	}
	c, err := dialDaemonAs(ctx, home, ws, env, asked)
	if err != nil {
		cancel()
		if errors.Is(err, daemonclient.ErrNoDaemon) {
			return frontend{}, nil, nil, err
		}
		if de := (*daemonclient.Error)(nil); errors.As(err, &de) && de.Code == uplinkwire.CodePrincipal {
			return frontend{}, nil, nil, usage(cmd, fmt.Errorf("--principal %s: %s; stop it (astrid stop) or use --%s to act as another principal", f.principal, de.Message, noDaemonFlag))
		}
		return frontend{}, nil, nil, fmt.Errorf("the daemon of %s: %w (--%s boots a kernel in-process instead)", home, err, noDaemonFlag)
	}
	stop := func() { c.Close(); cancel() }
	if err := matchDaemon(c, f); err != nil {
		stop()
		return frontend{}, nil, nil, usage(cmd, err) // exit 2, as each command's help says of usage errors
	}
	return frontend{k: c, remote: c}, ctx, stop, nil
}

// matchDaemon refuses a --principal the running daemon cannot honour for
// this client. (The workspace is the client's own: the daemon took it at
// the hello.)
func matchDaemon(c *daemonclient.Client, f kernelFlags) error {
	if f.principal != c.Principal() {
		return fmt.Errorf("--principal %s: the daemon serves you as principal %q; stop it (astrid stop) or use --%s to act as another principal", f.principal, c.Principal(), noDaemonFlag)
	}
	return nil
}
