package skills

import (
	"fmt"
	"strings"

	"github.com/astrid-go/astrid/sdk"
)

type readSkillArgs struct {
	Name string `json:"name" desc:"the skill's name, as the skill list gives it"`
}

// readSkill returns a skill's whole text, headed by where it comes from.
// A refused skill's answer says why; an unknown name lists the skills.
func readSkill(c *sdk.Call, args readSkillArgs) (string, error) {
	name := strings.TrimSpace(args.Name)
	if name == "" {
		return "", fmt.Errorf("name the skill to read")
	}
	lib, err := collect(c, "read-skill")
	if err != nil {
		return "", fmt.Errorf("the skills could not be gathered: %w", err)
	}
	if s := lib.find(name); s != nil {
		return fmt.Sprintf("[skill %s, from %s]\n\n%s", s.Name, s.Source, s.Content), nil
	}
	for _, r := range lib.refused {
		if r.Name == name {
			return "", fmt.Errorf("skill %q is refused: %s", name, r.Reason)
		}
	}
	var names []string
	for _, s := range lib.skills {
		names = append(names, s.Name)
	}
	if len(names) == 0 {
		return "", fmt.Errorf("there is no skill %q: no skills are installed", name)
	}
	return "", fmt.Errorf("there is no skill %q; the skills are: %s", name, strings.Join(names, ", "))
}
