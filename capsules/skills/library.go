package skills

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/skillmd"
	"github.com/astrid-go/astrid/sdk"
)

// Bounds on what is read.
const (
	// MaxSkillBytes is the largest SKILL.md offered (the static engine's
	// bound on a file, so both sources agree).
	MaxSkillBytes = skillmd.MaxBytes
	// maxWorkspaceSkills bounds the workspace skills read per request.
	maxWorkspaceSkills = 100
	// gatherWindow bounds the static fan-out.
	gatherWindow = 500 * time.Millisecond
	// WorkspaceDir is where a workspace keeps its skills.
	WorkspaceDir = ".astrid/skills"
	// workspaceSource names the workspace as a skill's source.
	workspaceSource = "workspace"
)

// skill is one skill as offered.
type skill struct {
	// Name is what read_skill takes: the skill's own name, or
	// "<source>/<name>" when an earlier source has that name.
	Name        string
	Description string
	Source      string
	Content     string
	// Trusted: its index line may go into the system prompt (its capsule
	// holds allow_prompt_injection).
	Trusted bool
}

// refusal is a skill left out, and why.
type refusal struct {
	Name, Reason string
}

// library is every skill offered to one request.
type library struct {
	skills  []skill
	refused []refusal
}

// staticAnswer is static.v1.response.skills.<id>'s payload.
type staticAnswer struct {
	Capsule   string `json:"capsule"`
	RequestID string `json:"request_id"`
	Skills    []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		File        string `json:"file"`
		Content     string `json:"content"`
	} `json:"skills"`
}

// collect gathers the skills with their text: every capsule's that
// serves them (in dispatch order), then the workspace's when [env]
// workspace_skills allows it.
func collect(c *sdk.Call, requestID string) (library, error) {
	servers, err := c.Interceptors(staticSkillsRequest)
	if err != nil {
		return library{}, fmt.Errorf("who intercepts %s: %w", staticSkillsRequest, err)
	}
	lib, err := gatherCapsules(c, requestID, servers)
	if err != nil {
		return library{}, err
	}
	addWorkspace(c, &lib)
	return lib, nil
}

// gatherCapsules asks servers for their skills.
func gatherCapsules(c *sdk.Call, requestID string, servers []string) (library, error) {
	var lib library
	var order []string
	for _, id := range servers {
		if id != c.CapsuleID() && !slices.Contains(order, id) {
			order = append(order, id)
		}
	}
	if len(order) == 0 {
		return lib, nil
	}
	answers, err := gather(c, requestID, order)
	if err != nil {
		return lib, err
	}
	for _, id := range order {
		a, ok := answers[id]
		if !ok {
			continue
		}
		trusted, err := c.HoldsGrant(id, hostapi.GrantPromptInjection)
		if err != nil {
			c.Log(hostapi.LogWarn, fmt.Sprintf("skills: cannot tell whether %s holds %s (treated as not): %v", id, hostapi.GrantPromptInjection, err))
		}
		for _, s := range a.Skills {
			desc := s.Description
			if fm, _, ok := skillmd.ParseFrontmatter(s.Content); ok && desc == "" {
				desc = fm.Description
			}
			lib.add(skill{Name: s.Name, Description: desc, Source: id, Content: s.Content, Trusted: trusted})
		}
	}
	return lib, nil
}

// addWorkspace adds the workspace's skills when [env] workspace_skills
// allows it.
func addWorkspace(c *sdk.Call, lib *library) {
	if workspaceAllowed(c) {
		workspaceSkills(c, lib)
	}
}

// workspaceAllowed reports whether [env] workspace_skills is true.
func workspaceAllowed(c *sdk.Call) bool {
	on, _ := c.Config("workspace_skills")
	return strings.EqualFold(strings.TrimSpace(on), "true")
}

// gather asks order's capsules for their skills and returns each answer
// by capsule (a capsule silent past gatherWindow is logged and left out).
func gather(c *sdk.Call, requestID string, order []string) (map[string]staticAnswer, error) {
	sub, err := c.Subscribe(staticSkillsResponses + "*")
	if err != nil {
		return nil, fmt.Errorf("subscribe static skills: %w", err)
	}
	defer func() { _ = c.Unsubscribe(sub) }()
	if err := c.PublishJSON(staticSkillsRequest, map[string]string{"request_id": requestID}); err != nil {
		return nil, fmt.Errorf("publish %s: %w", staticSkillsRequest, err)
	}
	answers := map[string]staticAnswer{}
	silent, err := sdk.Gather(c, sub, order, gatherWindow, func(msg hostapi.Message, awaited bool) bool {
		src := msg.SourceID
		if !awaited || msg.Topic != staticSkillsResponses+src {
			return false // only a capsule's own topic counts; the kernel stamps the sender
		}
		var a staticAnswer
		if err := json.Unmarshal(msg.Payload, &a); err != nil {
			c.Log(hostapi.LogWarn, fmt.Sprintf("skills: the skills of %s do not decode (left out): %v", src, err))
			return true
		}
		if a.RequestID != "" && a.RequestID != requestID {
			return false
		}
		answers[src] = a
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("receive static skills: %w", err)
	}
	for _, id := range silent {
		c.Log(hostapi.LogWarn, fmt.Sprintf("skills: capsule %s did not send its skills within %v", id, gatherWindow))
	}
	return answers, nil
}

// add appends s under a name no earlier skill has.
func (lib *library) add(s skill) {
	if s.Name == "" {
		return
	}
	if lib.find(s.Name) != nil {
		s.Name = s.Source + "/" + s.Name
		if lib.find(s.Name) != nil {
			return // the same source named two skills alike: the first stands
		}
	}
	lib.skills = append(lib.skills, s)
}

func (lib *library) find(name string) *skill {
	for i := range lib.skills {
		if lib.skills[i].Name == name {
			return &lib.skills[i]
		}
	}
	return nil
}

// workspaceSkills reads the workspace's .astrid/skills/*/SKILL.md through
// the host (its gate and os.Root: a path or symlink leading out of the
// workspace is refused there). A skill that is too large, unreadable or
// not UTF-8 is refused and logged with why.
func workspaceSkills(c *sdk.Call, lib *library) {
	entries, err := c.FSList(WorkspaceDir)
	if hostapi.CodeOf(err) == hostapi.CodeNotFound {
		return
	}
	if err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("skills: %s not read: %v", WorkspaceDir, err))
		return
	}
	n := 0
	for _, e := range entries {
		if n == maxWorkspaceSkills {
			c.Log(hostapi.LogWarn, fmt.Sprintf("skills: %s holds more than %d skills; the rest are left out", WorkspaceDir, maxWorkspaceSkills))
			return
		}
		file := path.Join(WorkspaceDir, e.Name, "SKILL.md")
		text, reason := readWorkspaceSkill(c, file)
		if reason != "" {
			lib.refused = append(lib.refused, refusal{Name: e.Name, Reason: reason})
			c.Log(hostapi.LogWarn, "skills: "+reason)
			continue
		}
		if text == "" {
			continue // a directory without a SKILL.md
		}
		n++
		fm, _, _ := skillmd.ParseFrontmatter(text)
		name := fm.Name
		if name == "" {
			name = e.Name
		}
		lib.add(skill{Name: name, Description: fm.Description, Source: workspaceSource, Content: text})
	}
}

// readWorkspaceSkill reads file, or says why it is refused ("" and "" for
// a skill directory without one).
func readWorkspaceSkill(c *sdk.Call, file string) (text, reason string) {
	info, err := c.FSStat(file)
	if hostapi.CodeOf(err) == hostapi.CodeNotFound {
		return "", ""
	}
	if err != nil {
		return "", fmt.Sprintf("%s is refused: %v", file, err)
	}
	if info.IsDir {
		return "", fmt.Sprintf("%s is refused: it is a directory", file)
	}
	if info.Size > MaxSkillBytes {
		return "", fmt.Sprintf("%s is refused: it is %d bytes, and a skill may have at most %d", file, info.Size, MaxSkillBytes)
	}
	b, err := c.FSRead(file)
	if err != nil {
		return "", fmt.Sprintf("%s is refused: %v", file, err)
	}
	if len(b) > MaxSkillBytes {
		return "", fmt.Sprintf("%s is refused: it grew past %d bytes", file, MaxSkillBytes)
	}
	if !utf8Valid(b) {
		return "", fmt.Sprintf("%s is refused: it is not UTF-8 text", file)
	}
	return string(b), ""
}
