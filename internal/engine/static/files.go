package static

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"

	"github.com/astrid-go/astrid/internal/capsulefile"
	"github.com/astrid-go/astrid/manifest"
)

// MaxFileBytes bounds one static file, and MaxKindBytes the files of one
// kind together, so that every answer fits in one bus message (1 MiB).
const (
	MaxFileBytes = 256 << 10
	MaxKindBytes = 768 << 10
)

// content is everything the engine serves, read once at load.
type content struct {
	context  []ContextFile
	skills   []Skill
	commands []Command
}

// readContent reads the files m declares from its directory. Nothing is
// read when m declares no files; a built-in (no directory) that declares
// some is an error.
func readContent(m *manifest.Manifest) (*content, error) {
	c := &content{}
	for _, cmd := range m.Commands {
		kind := cmd.Kind
		if kind == "" {
			kind = manifest.CommandSlash
		}
		c.commands = append(c.commands, Command{Name: cmd.Name, Description: cmd.Description, Kind: kind, File: cmd.File})
	}
	if !declaresFiles(m) {
		return c, nil
	}
	if m.Dir == "" {
		return nil, errors.New("the manifest names static files but the capsule has no directory to read them from")
	}
	root, err := os.OpenRoot(m.Dir)
	if err != nil {
		return nil, fmt.Errorf("open capsule directory: %w", err)
	}
	defer root.Close()
	r := reader{root: root}
	for _, f := range m.ContextFiles {
		text, err := r.text("context_file", f.File)
		if err != nil {
			return nil, err
		}
		c.context = append(c.context, ContextFile{Name: f.Name, File: f.File, Content: text})
	}
	r.total = 0
	for _, s := range m.Skills {
		text, err := r.text("skill", s.File)
		if err != nil {
			return nil, err
		}
		c.skills = append(c.skills, Skill{Name: s.Name, Description: s.Description, File: s.File, Content: text})
	}
	r.total = 0
	for i := range c.commands {
		cmd := &c.commands[i]
		if cmd.File == "" {
			continue
		}
		text, err := r.text("command", cmd.File)
		if err != nil {
			return nil, err
		}
		def, err := commandDefinition(text)
		if err != nil {
			return nil, fmt.Errorf("command %s: file %s: %w", cmd.Name, cmd.File, err)
		}
		cmd.Definition = def
	}
	return c, nil
}

func declaresFiles(m *manifest.Manifest) bool {
	if len(m.ContextFiles) > 0 || len(m.Skills) > 0 {
		return true
	}
	for _, c := range m.Commands {
		if c.File != "" {
			return true
		}
	}
	return false
}

// reader reads files of one kind under the capsule's root, counting their
// total size.
type reader struct {
	root  *os.Root
	total int
}

func (r *reader) text(kind, name string) (string, error) {
	// capsulefile: a regular file inside the directory, opened without
	// blocking (a FIFO would hang the load), its size checked first.
	data, err := capsulefile.ReadIn(r.root, name, MaxFileBytes)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", kind, name, err)
	}
	r.total += len(data)
	if r.total > MaxKindBytes {
		return "", fmt.Errorf("%s %s: the %s files together pass %d bytes", kind, name, kind, MaxKindBytes)
	}
	if !utf8.Valid(data) {
		return "", fmt.Errorf("%s %s: not UTF-8 text", kind, name)
	}
	return string(data), nil
}

// commandDefinition turns a declarative command file (TOML) into JSON.
func commandDefinition(text string) (json.RawMessage, error) {
	var def map[string]any
	if err := toml.Unmarshal([]byte(text), &def); err != nil {
		return nil, fmt.Errorf("not valid TOML: %w", err)
	}
	out, err := json.Marshal(def)
	if err != nil {
		return nil, fmt.Errorf("not representable as JSON: %w", err)
	}
	return out, nil
}
