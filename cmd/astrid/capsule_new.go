package main

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"text/template"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/astrid-go/astrid/manifest"
)

func init() {
	capsuleSubcommands = append(capsuleSubcommands, newCapsuleNewCmd)
}

// scaffolds holds the files `astrid capsule new` writes, one directory per
// kind, each a text/template (named *.tmpl so that Go never builds them
// here).
//
//go:embed scaffold
var scaffolds embed.FS

// scaffold is what the templates are filled with.
type scaffold struct {
	ID          string // the capsule id, "weather-now"
	Pkg         string // its Go package name, "weathernow"
	Tool        string // its tool's name, "weather_now"
	Title       string // for a Go test name, "WeatherNow"
	Description string
}

func newScaffold(id, description string) (scaffold, error) {
	if err := manifest.ValidateID(id); err != nil {
		return scaffold{}, err
	}
	s := scaffold{ID: id, Tool: strings.ReplaceAll(id, "-", "_"), Description: description}
	s.Pkg = strings.ReplaceAll(id, "-", "")
	if unicode.IsDigit(rune(s.Pkg[0])) {
		s.Pkg = "capsule" + s.Pkg
	}
	for _, part := range strings.Split(id, "-") {
		if part != "" {
			s.Title += strings.ToUpper(part[:1]) + part[1:]
		}
	}
	if s.Description == "" {
		s.Description = "Greets someone by name"
	}
	return s, nil
}

func newCapsuleNewCmd() *cobra.Command {
	var wasmKind, nativeKind, mcpKind bool
	var dir, description string
	cmd := &cobra.Command{
		Use:   "new <name> [--wasm | --native | --mcp]",
		Short: "Write a new capsule's files: a working tool to start from",
		Long: `Writes a new capsule named <name> (lowercase letters, digits and hyphens) into
./<name> (or --dir), with one working tool (<name> with hyphens as underscores) that
greets someone, an [env] value it reads (GREETING), and a README saying what to do
next. Every kind passes ` + "`astrid capsule check`" + ` as written:

  --wasm    (the default) a Go module built to wasm with ` + "`astrid capsule build`" + `:
            <name>.go (New() *sdk.Capsule), a test against sdk/sdktest, Capsule.toml
            naming <name>.wasm, .gitignore for the build output
  --native  a built-in capsule: a package to move into capsules/ of an astrid
            checkout and list in cmd/astrid/builtins.go (Capsule.toml embedded)
  --mcp     an MCP server on stdio (server.py, Python's standard library only)
            that astrid starts confined; its tool appears as <name>:<tool>

It refuses a directory that exists and is not empty.

Exit status: 0 written; 1 the directory could not be written; 2 a usage error (a
name that is not a capsule id, two kinds).`,
		Example: `  astrid capsule new weather && cd weather && astrid capsule build . && astrid capsule install .
  astrid capsule new notes --mcp
  astrid capsule new clock --native --dir capsules/clock`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := cobra.ExactArgs(1)(cmd, args); err != nil {
				return usage(cmd, err)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := newScaffold(args[0], description)
			if err != nil {
				return usage(cmd, err)
			}
			if n := btoi(wasmKind) + btoi(nativeKind) + btoi(mcpKind); n > 1 {
				return usage(cmd, errors.New("choose one of --wasm, --native and --mcp"))
			}
			kind := "wasm"
			switch {
			case nativeKind:
				kind = "native"
			case mcpKind:
				kind = "mcp"
			}
			if dir == "" {
				dir = s.ID
			}
			written, err := writeScaffold(kind, dir, s)
			if err != nil {
				return fmt.Errorf("capsule new: %w", err)
			}
			m, diags := manifest.Load(dir)
			if m == nil || diags.HasErrors() {
				// The templates are ours: a problem here is a bug.
				return fmt.Errorf("capsule new: the scaffold in %s does not pass capsule check: %v", dir, diags)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "wrote the %s capsule %s in %s:\n", kind, s.ID, dir)
			for _, f := range written {
				fmt.Fprintf(out, "  %s\n", f)
			}
			fmt.Fprintln(out, "next:")
			for _, step := range nextSteps(kind, dir, s) {
				fmt.Fprintf(out, "  %s\n", step)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&wasmKind, "wasm", false, "a Go capsule built to wasm (the default)")
	cmd.Flags().BoolVar(&nativeKind, "native", false, "a built-in capsule linked into astrid")
	cmd.Flags().BoolVar(&mcpKind, "mcp", false, "an MCP server on stdio")
	cmd.Flags().StringVar(&dir, "dir", "", "directory to write (default: ./<name>)")
	cmd.Flags().StringVar(&description, "description", "", "the capsule's one-line description (package.description)")
	return cmd
}

func nextSteps(kind, dir string, s scaffold) []string {
	switch kind {
	case "native":
		return []string{
			"mv " + dir + " <astrid checkout>/capsules/" + s.Pkg,
			"add {Manifest: " + s.Pkg + ".Manifest, New: " + s.Pkg + ".New} to builtins() in cmd/astrid/builtins.go",
			"go test ./capsules/" + s.Pkg + "/",
		}
	case "mcp":
		return []string{
			"astrid capsule install " + dir,
			"astrid tool call " + s.ID + ":" + s.Tool + ` '{"name":"Ada"}'`,
		}
	}
	return []string{
		"astrid capsule build " + dir,
		"astrid capsule install " + dir,
		"astrid tool call " + s.Tool + ` '{"name":"Ada"}'`,
	}
}

// writeScaffold fills kind's templates into dir, which must not exist or
// be empty, and returns the files written.
func writeScaffold(kind, dir string, s scaffold) ([]string, error) {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("%s exists and is not empty; choose another --dir, or remove it", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	root := path.Join("scaffold", kind)
	entries, err := scaffolds.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var written []string
	for _, e := range entries {
		src, _ := strings.CutSuffix(e.Name(), ".tmpl")
		name := map[string]string{
			"capsule.go":      s.Pkg + ".go",
			"capsule_test.go": s.Pkg + "_test.go",
			"gitignore":       ".gitignore",
		}[src]
		if name == "" {
			name = src
		}
		text, err := scaffolds.ReadFile(path.Join(root, e.Name()))
		if err != nil {
			return nil, err
		}
		tmpl, err := template.New(e.Name()).Option("missingkey=error").Parse(string(text))
		if err != nil {
			return nil, fmt.Errorf("template %s: %w", e.Name(), err)
		}
		var b bytes.Buffer
		if err := tmpl.Execute(&b, s); err != nil {
			return nil, fmt.Errorf("template %s: %w", e.Name(), err)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(b.String(), "#!") {
			mode = 0o755
		}
		target := filepath.Join(dir, name)
		if err := os.WriteFile(target, b.Bytes(), mode); err != nil {
			return nil, err
		}
		written = append(written, target)
	}
	return written, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
