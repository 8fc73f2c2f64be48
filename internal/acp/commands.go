package acp

import (
	"context"
	"strings"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/astrid-go/astrid/internal/commandclient"
	"github.com/astrid-go/astrid/ipc"
)

// commandsTimeout bounds gathering the capsules' commands for a session.
const commandsTimeout = 5 * time.Second

// builtinCommands are astrid acp's own commands, which no capsule's may
// shadow: /compact compacts the session's history now.
var builtinCommands = []string{"compact"}

// loadCommands gathers the capsules' slash commands for s and tells the
// editor about them (available_commands_update), so it offers them as
// `/name`; a failure is logged and leaves the session without any. It
// runs after the session's response has gone out (the editor must know
// the session first), counted as a handler so shutdown waits for it.
func (a *agent) loadCommands(s *session) {
	if !a.enter() {
		return
	}
	go func() {
		defer a.leave()
		ctx, cancel := context.WithTimeout(a.hard, commandsTimeout)
		defer cancel()
		cmds, err := commandclient.List(ctx, s.workspace().Kernel, a.opts.Principal, builtinCommands)
		if err != nil {
			a.log.Warn("acp: the capsules' commands were not read", "session", s.id, "err", err)
		}
		s.mu.Lock()
		s.commands = cmds
		s.mu.Unlock()
		list := []acpsdk.AvailableCommand{{Name: "compact", Description: "Summarize this session's older turns now (the session keeps them all)"}}
		for _, c := range cmds {
			desc := c.Description
			if c.Renamed != "" {
				desc += " (renamed: " + c.Renamed + ")"
			}
			list = append(list, acpsdk.AvailableCommand{Name: c.Name, Description: desc,
				Input: &acpsdk.AvailableCommandInput{Unstructured: &acpsdk.UnstructuredCommandInput{Hint: "arguments"}}})
		}
		u := acpsdk.SessionUpdate{AvailableCommandsUpdate: &acpsdk.SessionAvailableCommandsUpdate{AvailableCommands: list}}
		if err := a.conn.SessionUpdate(a.hard, acpsdk.SessionNotification{SessionId: acpsdk.SessionId(s.id), Update: u}); err != nil {
			a.log.Debug("acp: commands not announced", "session", s.id, "err", err)
		}
	}()
}

// expandCommand is the prompt for text: `/compact` is the compact
// action (no text); a capsule command's expanded prompt when text is
// `/name args` naming one of s's commands; else text as it is (an
// unknown `/word` is the person's text).
func (s *session) expandCommand(text string) (prompt, action string, err error) {
	line := strings.TrimSpace(text)
	if !strings.HasPrefix(line, "/") {
		return text, "", nil
	}
	name, args, _ := strings.Cut(line[1:], " ")
	if name == "compact" {
		return "", ipc.ActionCompact, nil
	}
	s.mu.Lock()
	c, ok := commandclient.Find(s.commands, name)
	s.mu.Unlock()
	if !ok {
		return text, "", nil
	}
	prompt, err = c.Expand(args)
	return prompt, "", err
}
