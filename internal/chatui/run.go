package chatui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// Run runs the chat on the terminal in and out until the person leaves or
// ctx ends, and returns the session it was in last. A turn still running
// then is cancelled.
func Run(ctx context.Context, o Options, in io.Reader, out io.Writer) (session string, err error) {
	return run(ctx, New(ctx, o), in, out)
}

// run is Run with the model given.
func run(ctx context.Context, m *Model, in io.Reader, out io.Writer) (session string, err error) {
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out))
	_, err = p.Run()
	m.leave(out)
	switch {
	case err == nil, errors.Is(err, tea.ErrInterrupted):
		return m.session, nil // left, or a SIGINT from outside (a key press is not one)
	case errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil:
		return m.session, ctx.Err()
	}
	return m.session, fmt.Errorf("chat: %w", err)
}

// leave cancels the turn still running, if any, and writes what was not
// printed yet, so that nothing shown is lost when the UI goes.
func (m *Model) leave(out io.Writer) {
	if m.turn != nil {
		if err := m.turn.Cancel(); err != nil {
			m.appendNotice(bad, "the running turn was not cancelled: "+err.Error())
		} else {
			m.appendNotice(warn, "The running turn was cancelled.")
		}
	}
	m.settle(true)
	m.closeTurn()
	if lines := m.takeOutbox(); len(lines) > 0 {
		fmt.Fprintln(out, strings.Join(lines, "\n"))
	}
}
