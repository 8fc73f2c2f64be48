package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"reflect"
	"strconv"
)

// Sources of a Setting's value.
const (
	SourceDefault = "default"
	SourceFlag    = "flag"
	SourceEnv     = "env"
)

// Setting is one key of the effective configuration: its dotted name, its
// value spelled in TOML and where the value came from ("default",
// "config.toml:LINE", or what a caller overrode it with).
type Setting struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// Settings lists every key of cfg in Config's field order, top-level keys
// first, each with its value and its source: the line of the file at path
// that writes it, else "default". cfg is what Load(path) returned, possibly
// changed since by flags: a key whose value differs from what the file
// (or the default) gives is a caller's override and is marked overridden.
func Settings(path string, cfg Config, overridden string) ([]Setting, error) {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("config: %w", err)
	}
	at := keyPositions(data)
	loaded, err := Load(path)
	if err != nil {
		return nil, err
	}
	base := flatten(loaded)
	var out []Setting
	for _, kv := range flatten(cfg) {
		s := Setting{Key: kv.key, Value: kv.value, Source: SourceDefault}
		if w, ok := at[kv.key]; ok {
			s.Source = path + ":" + strconv.Itoa(w.line)
		}
		if v, ok := lookup(base, kv.key); !ok || v != kv.value {
			s.Source = overridden
		}
		out = append(out, s)
	}
	return out, nil
}

type keyValue struct{ key, value string }

func lookup(kvs []keyValue, key string) (string, bool) {
	for _, kv := range kvs {
		if kv.key == key {
			return kv.value, true
		}
	}
	return "", false
}

// flatten lists cfg's keys as TOML would order them: top-level values,
// then each table's.
func flatten(cfg Config) []keyValue {
	v := reflect.ValueOf(cfg)
	t := v.Type()
	var out []keyValue
	for pass := range 2 {
		for i := range t.NumField() {
			f, fv := t.Field(i), v.Field(i)
			name := tomlName(f)
			if name == "" {
				continue
			}
			table := f.Type.Kind() == reflect.Struct && f.Type != durationType
			if table != (pass == 1) {
				continue
			}
			if !table {
				out = append(out, keyValue{name, tomlValue(fv)})
				continue
			}
			for j := range f.Type.NumField() {
				if sub := tomlName(f.Type.Field(j)); sub != "" {
					out = append(out, keyValue{name + "." + sub, tomlValue(fv.Field(j))})
				}
			}
		}
	}
	return out
}
