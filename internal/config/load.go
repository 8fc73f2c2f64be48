package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Load reads the config file at path. A missing file is Default(); any
// other problem (syntax, unknown key, wrong type, invalid value) is an error
// naming file:line:col and the key, listing every problem found.
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Default(), nil
	}
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	return parse(path, data)
}

// parse decodes data over Default(), so a key the file omits keeps its
// default.
func parse(file string, data []byte) (Config, error) {
	at := keyPositions(data)
	if err := checkDurationKinds(file, at); err != nil {
		return Config{}, err
	}
	cfg := Default()
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return Config{}, decodeProblems(file, err)
	}
	if err := cfg.validate(file, at); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// decodeProblems turns go-toml's errors into Problems in the operator's
// terms (TOML keys and kinds, not Go field names).
func decodeProblems(file string, err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) {
		probs := make([]error, 0, len(strict.Errors))
		for i := range strict.Errors {
			e := &strict.Errors[i]
			line, col := e.Position()
			key := strings.Join(e.Key(), ".")
			msg := "unknown key"
			if s := suggest(key); s != "" {
				msg += " (did you mean " + s + "?)"
			}
			probs = append(probs, &Problem{File: file, Line: line, Column: col, Key: key, Msg: msg})
		}
		return errors.Join(probs...)
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, col := de.Position()
		key := strings.Join(de.Key(), ".")
		return &Problem{File: file, Line: line, Column: col, Key: key, Msg: decodeMessage(key, de)}
	}
	return &Problem{File: file, Msg: err.Error()}
}

// checkDurationKinds refuses a duration written as anything but a string.
// go-toml hands any scalar's text to Duration.UnmarshalText and reports its
// error without a position, so this check runs first, where positions are
// known.
func checkDurationKinds(file string, at map[string]written) error {
	for key, want := range schema() {
		w, ok := at[key]
		if !ok || want != durationWant || w.kind == unstable.String {
			continue
		}
		return &Problem{File: file, Line: w.value.line, Column: w.value.column, Key: key,
			Msg: fmt.Sprintf("expected %s, got a TOML %s", want, kindName(w.kind))}
	}
	return nil
}

// kindName is a TOML value kind in the decoder's words ("integer").
func kindName(k unstable.Kind) string {
	switch k {
	case unstable.InlineTable:
		return "table"
	case unstable.Bool:
		return "boolean"
	case unstable.LocalDate, unstable.LocalTime, unstable.LocalDateTime, unstable.DateTime:
		return "date/time"
	}
	return strings.ToLower(k.String())
}

func decodeMessage(key string, de *toml.DecodeError) string {
	msg := strings.TrimPrefix(de.Error(), "toml: ")
	if got, ok := typeMismatch(msg); ok {
		if want, ok := schema()[key]; ok {
			return fmt.Sprintf("expected %s, got a TOML %s", want, got)
		}
	}
	return msg
}

// typeMismatch reads go-toml's "cannot decode TOML <kind> into …" and returns
// the kind (a word). It is string matching, not a regexp, so that no
// package-level regexp is compiled when every astrid process starts.
func typeMismatch(msg string) (string, bool) {
	rest, ok := strings.CutPrefix(msg, "cannot decode TOML ")
	if !ok {
		return "", false
	}
	kind, _, ok := strings.Cut(rest, " into")
	if !ok || kind == "" {
		return "", false
	}
	for _, r := range kind {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "", false
		}
	}
	return kind, true
}
