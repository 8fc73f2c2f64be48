package config

import "fmt"

// Problem is one thing wrong in a config file, where it is. Load returns
// every Problem it found, joined with errors.Join.
type Problem struct {
	File   string
	Line   int    // 1-based; 0 when the key is not in the file (a default)
	Column int    // 1-based
	Key    string // dotted, with [i] for array elements; "" for syntax errors
	Msg    string
}

func (p *Problem) Error() string {
	where := p.File
	if p.Line > 0 {
		where = fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
	}
	if p.Key == "" {
		return fmt.Sprintf("config: %s: %s", where, p.Msg)
	}
	return fmt.Sprintf("config: %s: %s: %s", where, p.Key, p.Msg)
}
