// Package chatui is `astrid chat`'s interactive terminal UI (bubbletea v2):
// a prompt line at the bottom, the agent's answer streaming in above it,
// each tool call shown while it runs and folded to one line when done,
// approval questions asked inline, the slash commands (/clear, /session,
// /models, /help), and Ctrl-C to cancel a turn or, twice, to leave.
//
// It owns the person's side of a conversation and nothing else: turns go
// through internal/agentclient (docs/agent.md) and model choices through
// internal/registryclient, both over the agentclient.Kernel it is given,
// so the same UI runs over an in-process kernel today and over the
// daemon's socket once that exists. It must not boot a kernel, reach into
// one, or let bubbletea types escape into those clients.
//
// What finished (the person's prompts, answered text, folded tool calls)
// is printed above the UI into the terminal's own scrollback, in order; the
// UI itself redraws only the unfinished part of the current turn, the
// pending question and the prompt line.
package chatui
