package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/astrid-go/astrid/internal/agentclient"
	"github.com/astrid-go/astrid/ipc"
)

// maxElicitTries is how often a person may answer a select or a value
// that does not fit before the question counts as declined.
const maxElicitTries = 3

// elicit is a toolclient.Elicitor: it asks the person on the terminal for
// the value a capsule's elicit call wants. Without a terminal it declines
// at once, so that the capsule hears nobody is there instead of waiting
// out the host's window; --yes answers no question. A secret is read
// without echo; a select shows numbered options. What is typed is never
// printed back.
func (a *approver) elicit(ctx context.Context, q ipc.ElicitRequest) ipc.ElicitResponse {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tty == nil {
		fmt.Fprintf(a.prompt, "astrid: capsule %s asked for %s; nobody can answer here (no terminal), so it was told the question was declined\n",
			q.CapsuleID, oneLine(ipc.ApprovalText(q.Field.Key, 0), 100))
		return ipc.ElicitResponse{RequestID: q.RequestID}
	}
	if q.Form != nil {
		// A form: field by field, required fields first.
		fmt.Fprintf(a.prompt, "\nCapsule '%s' asks: %s\n", q.CapsuleID, ipc.ApprovalText(q.Field.Prompt, 300))
		return agentclient.AnswerForm(q, func(f ipc.OnboardingField) ipc.ElicitResponse {
			return a.ask(ctx, q.RequestID, "  "+ipc.ApprovalText(f.Key, 100), f)
		})
	}
	return a.ask(ctx, q.RequestID, fmt.Sprintf("Capsule '%s' asks for %s", q.CapsuleID, ipc.ApprovalText(q.Field.Key, 100)), q.Field)
}

// ask asks the person on the terminal for f under header, letting them
// try again while the answer does not fit; the caller holds a.mu and has
// checked that there is a terminal.
func (a *approver) ask(ctx context.Context, id, header string, f ipc.OnboardingField) ipc.ElicitResponse {
	declined := ipc.ElicitResponse{RequestID: id}
	if ctx.Err() != nil {
		return declined
	}
	if a.lines == nil {
		a.lines = bufio.NewReader(a.tty)
	}
	fmt.Fprintf(a.prompt, "\n%s\n", header)
	if f.Description != nil && *f.Description != "" {
		fmt.Fprintf(a.prompt, "  %s\n", ipc.ApprovalText(*f.Description, 1024))
	}
	for try := 0; try < maxElicitTries; try++ {
		r, retry, err := a.askField(ctx, id, f)
		if err != nil {
			if ctx.Err() != nil {
				err = errors.New("interrupted")
			}
			fmt.Fprintf(a.prompt, "astrid: %v; the question was declined\n", err)
			return declined
		}
		if !retry {
			return r
		}
	}
	fmt.Fprintln(a.prompt, "astrid: no fitting answer; the question was declined")
	return declined
}

// errNoAnswer is the terminal closing (Ctrl-D) instead of an answer.
var errNoAnswer = errors.New("no answer (end of input)")

// askField asks for f once. retry is true when the answer does not fit and
// the person may try again; an empty line takes the default, and a line
// of "-" alone declines.
func (a *approver) askField(ctx context.Context, id string, f ipc.OnboardingField) (r ipc.ElicitResponse, retry bool, err error) {
	r.RequestID = id
	prompt := ipc.ApprovalText(f.Prompt, 300)
	def := ""
	if f.Default != nil {
		def = *f.Default
	}
	switch f.FieldType.Kind {
	case ipc.FieldEnum:
		for i, o := range f.FieldType.Options {
			mark := " "
			if o == def {
				mark = "*"
			}
			fmt.Fprintf(a.prompt, " %s%d) %s\n", mark, i+1, ipc.ApprovalText(o, 200))
		}
		fmt.Fprintf(a.prompt, "%s [number%s, - to decline]: ", prompt, defaultHint(def != ""))
	case ipc.FieldArray:
		fmt.Fprintf(a.prompt, "%s [comma-separated%s, - to decline]: ", prompt, defaultHint(def != ""))
	case ipc.FieldSecret:
		fmt.Fprintf(a.prompt, "%s [hidden as you type; - to decline]: ", prompt)
	default:
		fmt.Fprintf(a.prompt, "%s [%s- to decline]: ", prompt, defaultText(def))
	}
	var line string
	if f.FieldType.Kind == ipc.FieldSecret {
		tty, ok := a.tty.(*os.File)
		if !ok {
			return r, false, errors.New("this terminal cannot hide a secret")
		}
		line, err = withoutEcho(tty, func() (string, error) { return a.readLine(ctx) })
	} else {
		line, err = a.readLine(ctx)
	}
	if err != nil {
		return r, false, err
	}
	r, err = agentclient.ParseElicitAnswer(id, f, line)
	if err != nil {
		fmt.Fprintf(a.prompt, "astrid: %v\n", err)
		return r, true, nil
	}
	return r, false, nil
}

// readLine reads one line from the terminal, without its newline, or
// gives up when ctx ends (Ctrl-C while a capsule loads: the kernel's close
// waits for the load, which must not wait for a line nobody will type).
// The read itself cannot be interrupted; it goes on in the background of
// a command that is ending.
func (a *approver) readLine(ctx context.Context) (string, error) {
	type read struct {
		line string
		err  error
	}
	got := make(chan read, 1)
	go func() {
		line, err := a.lines.ReadString('\n')
		got <- read{line, err}
	}()
	var r read
	select {
	case r = <-got:
	case <-ctx.Done():
		fmt.Fprintln(a.prompt)
		return "", ctx.Err()
	}
	if r.err != nil && r.line == "" {
		fmt.Fprintln(a.prompt)
		return "", errNoAnswer
	}
	return trimNewline(r.line), nil
}

func defaultHint(has bool) string {
	if has {
		return "; Enter for the default"
	}
	return ""
}

func defaultText(def string) string {
	if def == "" {
		return ""
	}
	return "default " + ipc.ApprovalText(def, 100) + "; "
}
