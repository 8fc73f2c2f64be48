package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/astrid-go/astrid/internal/bus"
)

// maxArgumentBytes bounds a tool call's arguments: they travel inside one
// bus message, which carries at most bus.DefaultMaxMessage bytes.
const maxArgumentBytes = bus.DefaultMaxMessage

// excerptBytes is how much of a bad input an error quotes: enough to
// recognise it, too little to carry a secret pasted inside it whole.
const excerptBytes = 24

// toolArguments reads `tool call`'s arguments: arg itself, or "-" for
// standard input, or "@file" for a file's contents (a shell argument cannot
// exceed 128 KiB; a message can carry 1 MiB). The arguments must be one JSON
// value of at most maxArgumentBytes; errors quote only the first
// excerptBytes of what was given.
func toolArguments(arg string, stdin io.Reader) (json.RawMessage, error) {
	var data []byte
	var err error
	from := "the arguments"
	switch {
	case arg == "-":
		from = "the arguments on standard input"
		data, err = readCapped(stdin)
	case strings.HasPrefix(arg, "@"):
		from = "the arguments in " + arg[1:]
		var f *os.File
		if f, err = os.Open(arg[1:]); err == nil {
			data, err = readCapped(f)
			_ = f.Close()
		}
	default:
		data = []byte(arg)
		if len(data) > maxArgumentBytes {
			err = errTooLong(len(data))
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	if !json.Valid(data) {
		var v any
		reason := json.Unmarshal(data, &v) // names the first syntax error, quoting at most a character
		return nil, fmt.Errorf("%s are not valid JSON (%v): %s", from, reason, excerpt(data))
	}
	return data, nil
}

func readCapped(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxArgumentBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxArgumentBytes {
		return nil, errTooLong(-1)
	}
	return data, nil
}

func errTooLong(n int) error {
	size := "more than " + fmt.Sprint(maxArgumentBytes)
	if n >= 0 {
		size = fmt.Sprint(n)
	}
	return errors.New(size + " bytes, over the " + fmt.Sprint(maxArgumentBytes) + "-byte limit of one bus message")
}

// excerpt quotes the start of b and says how long it is in all.
func excerpt(b []byte) string {
	if len(b) <= excerptBytes {
		return fmt.Sprintf("%q", b)
	}
	return fmt.Sprintf("%q… (%d bytes in all)", b[:excerptBytes], len(b))
}
