package runtime

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"

	"github.com/astrid-go/astrid/internal/capsulefile"
	"github.com/astrid-go/astrid/internal/skillmd"
	"github.com/astrid-go/astrid/manifest"
	"github.com/astrid-go/astrid/sdk"
)

// SkillsCapsuleID is the operator's skill library ($ASTRID_HOME/skills)
// as a capsule: static-only, serving each <name>/SKILL.md as a [[skill]]
// (docs/skills.md).
const SkillsCapsuleID = "astrid-skills"

// maxLibrarySkills bounds the skills read from the library.
const maxLibrarySkills = 200

// SkillLibrary reads dir's <name>/SKILL.md files and returns a candidate
// serving those that pass, or nil when none does (or dir does not
// exist), and a Problem for each refused one: larger than
// skillmd.MaxBytes, not UTF-8, or reached through a symlink that leads out
// of dir (read through os.Root on it). The candidate is the operator's
// own: it holds allow_prompt_injection, so its index goes into the system
// prompt, and like a built-in it needs no install record. It is read at
// boot; a skill added later is offered from the next start.
func SkillLibrary(dir string) (*Candidate, []Problem) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []Problem{{ID: SkillsCapsuleID, Dir: dir, Err: fmt.Errorf("skill library %s: %w", dir, err)}}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, []Problem{{ID: SkillsCapsuleID, Dir: dir, Err: fmt.Errorf("skill library %s: %w", dir, err)}}
	}
	defer root.Close()
	type skillEntry struct {
		Name        string `toml:"name"`
		Description string `toml:"description,omitempty"`
		File        string `toml:"file"`
	}
	var skills []skillEntry
	var problems []Problem
	refuse := func(name string, err error) {
		problems = append(problems, Problem{ID: SkillsCapsuleID + "/" + name, Dir: filepath.Join(dir, name), Err: err})
	}
	for _, e := range entries {
		if len(skills) == maxLibrarySkills {
			refuse(e.Name(), fmt.Errorf("skill %s is left out: the library offers at most %d skills", e.Name(), maxLibrarySkills))
			continue
		}
		if !e.IsDir() && e.Type()&fs.ModeSymlink == 0 {
			continue // a file beside the skill folders
		}
		file := e.Name() + "/SKILL.md"
		data, err := capsulefile.ReadIn(root, file, skillmd.MaxBytes)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // not a skill folder
		case err != nil && strings.Contains(err.Error(), "escapes"):
			refuse(e.Name(), fmt.Errorf("skill %s is refused: it leads out of the skill library through a symlink (%w)", filepath.Join(dir, file), err))
			continue
		case err != nil:
			refuse(e.Name(), fmt.Errorf("skill %s is refused: %w", filepath.Join(dir, file), err))
			continue
		case !utf8.Valid(data):
			refuse(e.Name(), fmt.Errorf("skill %s is refused: it is not UTF-8 text", filepath.Join(dir, file)))
			continue
		}
		fm, _, _ := skillmd.ParseFrontmatter(string(data))
		name := fm.Name
		if name == "" {
			name = e.Name()
		}
		skills = append(skills, skillEntry{Name: name, Description: fm.Description, File: file})
	}
	if len(skills) == 0 {
		return nil, problems
	}
	doc := map[string]any{
		"package": map[string]any{"name": SkillsCapsuleID, "version": "0.1.0", "astrid-version": "^0.1",
			"description": "The operator's skill library, " + dir},
		"capabilities": map[string]any{"allow_prompt_injection": true},
		"skill":        skills,
	}
	text, err := toml.Marshal(doc)
	if err != nil {
		return nil, append(problems, Problem{ID: SkillsCapsuleID, Dir: dir, Err: fmt.Errorf("skill library %s: %w", dir, err)})
	}
	m, diags := manifest.Parse(text, "skills", dir)
	if err := diags.Err(false); err != nil {
		return nil, append(problems, Problem{ID: SkillsCapsuleID, Dir: dir, Err: fmt.Errorf("skill library %s: %w", dir, err)})
	}
	return &Candidate{Manifest: m, Code: func() *sdk.Capsule { return sdk.New("The operator's skill library") }}, problems
}
