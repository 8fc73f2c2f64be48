package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/internal/sessionclient"
	"github.com/astrid-go/astrid/internal/toolclient"
)

// sessionWorkspace is the directory a session started here is recorded
// under: --workspace, else the current directory, absolute and with its
// symlinks resolved (so two spellings of one directory find the same
// sessions).
func sessionWorkspace(f kernelFlags) (string, error) {
	ws := f.workspace
	if ws == "" {
		var err error
		if ws, err = os.Getwd(); err != nil {
			return "", fmt.Errorf("the current directory: %w", err)
		}
	}
	abs, err := filepath.Abs(ws)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return abs, nil
}

// newestSession is the session --continue resumes: the one of principal
// last written whose recorded workspace is ws.
func newestSession(ctx context.Context, ak agentclient.Kernel, principal, ws string) (string, error) {
	k, ok := ak.(toolclient.Kernel)
	if !ok {
		return "", fmt.Errorf("--continue: this kernel cannot list sessions")
	}
	ctx, cancel := context.WithTimeout(ctx, sessionTimeout)
	defer cancel()
	list, err := sessionclient.List(ctx, k, principal, false)
	if err != nil {
		return "", err
	}
	s, ok := sessionclient.Newest(list, ws)
	if !ok {
		return "", fmt.Errorf("--continue: no session of %s yet (astrid session list shows them all; continue one with --session <id>)", ws)
	}
	return s.SessionID, nil
}

// setWorkspace records ws as the workspace of session id, which this
// command started (best effort, within sessionTimeout).
func setWorkspace(ctx context.Context, k toolclient.Kernel, principal, id, ws string) {
	ctx, cancel := context.WithTimeout(ctx, sessionTimeout)
	defer cancel()
	_ = sessionclient.SetWorkspace(ctx, k, principal, id, ws)
}

// recordWorkspace records ws as session id's workspace when it has none
// yet (a session this command started), so --continue finds it from
// there. Best effort: a session that was not written (nothing ran) or a
// store that does not answer leaves it unrecorded.
func recordWorkspace(ctx context.Context, ak agentclient.Kernel, principal, id, ws string) {
	k, ok := ak.(toolclient.Kernel)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, sessionTimeout)
	defer cancel()
	if s, ok, err := sessionclient.Meta(ctx, k, principal, id); err != nil || !ok || s.Workspace != "" {
		return
	}
	_ = sessionclient.SetWorkspace(ctx, k, principal, id, ws)
}
