package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// operatorTerminal is where the person running a command answers its
// questions: standard input, when it is a terminal. Lines are read a byte
// at a time, so nothing past an answer is consumed (a later question, or
// readEnvValue, reads the next line).
type operatorTerminal struct {
	in  *os.File
	out io.Writer // prompts go to standard error
}

// terminalOf is cmd's terminal, or nil when standard input is not one
// (a pipe, a file, a test): then nobody can be asked.
func terminalOf(cmd *cobra.Command) *operatorTerminal {
	f, ok := cmd.InOrStdin().(*os.File)
	if !ok || !isTerminal(f) {
		return nil
	}
	return &operatorTerminal{in: f, out: cmd.ErrOrStderr()}
}

// errNoEcho is withoutEcho's refusal: the terminal cannot hide typing.
var errNoEcho = errors.New("this terminal cannot hide what is typed")

// secret reads one line with echo off, so a secret typed at the terminal
// never shows. ok is false when echo cannot be turned off (then the
// caller reads it some other way).
func (t *operatorTerminal) secret() (value string, ok bool, err error) {
	value, err = withoutEcho(t.in, t.line)
	if errors.Is(err, errNoEcho) {
		return "", false, nil
	}
	return value, true, err
}

// line reads one line, without its newline.
func (t *operatorTerminal) line() (string, error) {
	var b strings.Builder
	buf := make([]byte, 1)
	for {
		n, err := t.in.Read(buf)
		if n == 1 {
			if buf[0] == '\n' {
				return trimNewline(b.String()), nil
			}
			b.WriteByte(buf[0])
		}
		if errors.Is(err, io.EOF) {
			return trimNewline(b.String()), nil
		}
		if err != nil {
			return "", fmt.Errorf("read the answer: %w", err)
		}
	}
}

// confirm asks a yes/no question; only y or yes is yes.
func (t *operatorTerminal) confirm(question string) (bool, error) {
	fmt.Fprintf(t.out, "%s [y/N] ", question)
	answer, err := t.line()
	if err != nil {
		return false, err
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}
