package skills

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/sdk"
)

// The index of the capsules' skills (not the workspace's, read each
// time) is kept in volatile KV between prompts: a static fan-out carries
// every skill's whole text, which a prompt needs only the names and
// descriptions of. It is kept as two lines of JSON: what it is valid for
// with its rendered text, then the skills (their text left out). A prompt
// decodes the first line only, unless the workspace's skills are read too
// (decoding and rendering 50 skills on every prompt was a third of what
// the skills add to one).
const (
	keyIndex = "~skills.index"
	// indexMaxAge bounds how long a kept index is served: the kernel
	// announces a reload (astrid.v1.capsules_loaded, which drops it) to
	// each principal that acted, and this catches one that had not yet.
	indexMaxAge = time.Minute
)

// cachedIndex is the first line of a kept index: the capsule set it is
// valid for, when it was gathered, and its rendered text.
type cachedIndex struct {
	Servers []string `json:"servers"`
	AtMs    int64    `json:"at_ms"`
	System  string   `json:"system"`
	User    string   `json:"user"`
}

// indexText is the prompt's index (index's system and user parts): the
// capsules' skills from the kept index while the same capsules serve
// skills, else gathered and kept; the workspace's are read each time.
func indexText(c *sdk.Call, requestID string) (system, user string, err error) {
	servers, err := c.Interceptors(staticSkillsRequest)
	if err != nil {
		return "", "", fmt.Errorf("who intercepts %s: %w", staticSkillsRequest, err)
	}
	set := slices.Clone(servers)
	slices.Sort(set)
	set = slices.Compact(set)
	now := c.Now()
	if b, ok, err := c.KVGet(keyIndex); err == nil && ok {
		head, rest, _ := bytes.Cut(b, []byte{'\n'})
		var kept cachedIndex
		// A stamp from the future counts as stale.
		if json.Unmarshal(head, &kept) == nil && slices.Equal(kept.Servers, set) {
			if age := now.Sub(time.UnixMilli(kept.AtMs)); age >= 0 && age < indexMaxAge {
				if !workspaceAllowed(c) {
					return kept.System, kept.User, nil
				}
				var lib library
				if json.Unmarshal(rest, &lib.skills) == nil {
					return withWorkspace(c, lib, kept)
				}
			}
		}
	}
	lib, err := gatherCapsules(c, requestID, servers)
	if err != nil {
		return "", "", err
	}
	keep := cachedIndex{Servers: set, AtMs: now.UnixMilli()}
	keep.System, keep.User = index(lib)
	for i := range lib.skills {
		lib.skills[i].Content = ""
	}
	head, err := json.Marshal(keep)
	if err == nil {
		var rest []byte
		if rest, err = json.Marshal(lib.skills); err == nil {
			err = c.KVSet(keyIndex, append(append(head, '\n'), rest...))
		}
	}
	if err != nil {
		c.Log(hostapi.LogWarn, "skills: the index was not kept: "+err.Error())
	}
	if !workspaceAllowed(c) {
		return keep.System, keep.User, nil
	}
	return withWorkspace(c, lib, keep)
}

// withWorkspace is the index of lib's skills and the workspace's; kept's
// text when the workspace adds none.
func withWorkspace(c *sdk.Call, lib library, kept cachedIndex) (system, user string, err error) {
	n := len(lib.skills)
	lib.skills = slices.Clip(lib.skills)
	workspaceSkills(c, &lib)
	if len(lib.skills) == n {
		return kept.System, kept.User, nil
	}
	system, user = index(lib)
	return system, user, nil
}

// handleCapsulesLoaded drops the kept index: a capsule reloaded in place
// keeps its id, so the set of servers alone would not notice new skills.
func handleCapsulesLoaded(c *sdk.Call) error {
	if err := c.KVDelete(keyIndex); err != nil && hostapi.CodeOf(err) != hostapi.CodeNotFound {
		return fmt.Errorf("skills: drop the index: %w", err)
	}
	return nil
}
