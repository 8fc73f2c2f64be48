package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/internal/config"
	"github.com/astrid-go/astrid/internal/daemonclient"
	"github.com/astrid-go/astrid/internal/host"
	"github.com/astrid-go/astrid/internal/uplinkwire"
	"github.com/astrid-go/astrid/manifest"
)

// The workspace belongs to the request, not to the daemon (DESIGN §4a,
// §8): every command that acts on files works on --workspace, else the
// current directory, whether a daemon serves it or a kernel boots
// in-process; and the provider settings of its environment (OPENAI_*,
// ANTHROPIC_*) apply to its own requests. Through the daemon both ride on
// the connection's hello (docs/uplink.md, "Workspace and settings").

// clientWorkspace is the directory this command works on: flag, else the
// current directory; absolute, symlinks resolved, an existing directory
// and not inside $ASTRID_HOME (home). Each refusal says what to do.
func clientWorkspace(flag, home string) (string, error) {
	ws := flag
	if ws == "" {
		wd, err := os.Getwd()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", errors.New("the current directory no longer exists (was it deleted?): cd into a directory, or name one with --workspace")
			}
			return "", fmt.Errorf("the current directory: %w (name one with --workspace)", err)
		}
		ws = wd
	}
	abs, err := filepath.Abs(ws)
	if err != nil {
		return "", fmt.Errorf("--workspace %s: %w", ws, err)
	}
	checked, err := host.CheckWorkspace(abs, home, -1)
	if err != nil {
		if flag == "" {
			return "", fmt.Errorf("%w (name another with --workspace)", err)
		}
		return "", fmt.Errorf("--workspace: %w", err)
	}
	return checked, nil
}

// clientEnv is the provider settings of this command's environment, or an
// error naming a variable whose value cannot be a key or a URL.
func clientEnv() (map[string]string, error) {
	return uplinkwire.ReadEnv(os.Getenv)
}

// dialDaemonFor connects to the daemon of home as a client working on ws
// with the provider settings env.
func dialDaemonFor(ctx context.Context, home, ws string, env map[string]string) (*daemonclient.Client, error) {
	return dialDaemonAs(ctx, home, ws, env, "")
}

// dialDaemonAs is dialDaemonFor asking to act as principal (empty: the
// uid's default); the daemon allows only the principals config.toml maps
// this user's uid to ([uplink] principals).
func dialDaemonAs(ctx context.Context, home, ws string, env map[string]string, principal string) (*daemonclient.Client, error) {
	return daemonclient.Dial(ctx, home, daemonclient.Options{Client: "astrid " + manifest.RuntimeVersion, Workspace: ws, Env: env, Principal: principal})
}

// followSession makes a continued session work on the workspace it
// recorded when that is not this command's (ws), and says so on stderr:
// through the daemon the connection's later requests move there; in-process
// the kernel is booted again on it (stop and f follow). A recorded
// workspace that is gone is an error naming it.
func followSession(cmd *cobra.Command, fe frontend, ctx context.Context, stop *func(), f *kernelFlags, id, recorded, ws string) (frontend, context.Context, error) {
	if move, err := sessionMoves(cmd, id, recorded, ws); err != nil || !move {
		return fe, ctx, err
	}
	if fe.remote != nil {
		if _, err := fe.remote.SetWorkspace(recorded); err != nil {
			return fe, ctx, fmt.Errorf("--session %s: the daemon: %w", id, err)
		}
		return fe, ctx, nil
	}
	(*stop)()
	f.workspace = recorded
	fe, ctx, next, err := openFrontend(cmd, *f)
	if err != nil {
		*stop = func() {}
		return fe, ctx, err
	}
	*stop = next
	return fe, ctx, nil
}

// sessionMoves reports whether continuing session id from ws moves to the
// workspace it recorded, checked and said on stderr; a recorded workspace
// that cannot be used is a usage error naming it.
func sessionMoves(cmd *cobra.Command, id, recorded, ws string) (bool, error) {
	if recorded == "" || recorded == ws {
		return false, nil
	}
	home, err := config.Home()
	if err != nil {
		return false, err
	}
	if _, err := host.CheckWorkspace(recorded, home, -1); err != nil {
		return false, usage(cmd, fmt.Errorf("--session %s: %w (it was recorded as the session's workspace)", id, err))
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "astrid: session %s works on %s, not on %s: continuing it there\n", id, recorded, ws)
	return true, nil
}
