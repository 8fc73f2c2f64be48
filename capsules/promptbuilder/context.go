package promptbuilder

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/sdk"
)

// The workspace files that carry project instructions, in order of
// preference: the first that exists and is not blank is used.
var contextFileNames = []string{"AGENTS.md", "ASTRID.md"}

// Size caps of context text.
const (
	// MaxContextFileBytes is how much of AGENTS.md / ASTRID.md goes into
	// the prompt; the rest is cut with a note.
	MaxContextFileBytes = 64 << 10
	// maxContextFileRead is the largest file read at all (a bigger one is
	// named and left out rather than read into memory to be cut).
	maxContextFileRead = 1 << 20
	// MaxStaticContextBytes caps the text of one static capsule's context
	// files together.
	MaxStaticContextBytes = 64 << 10
	// staticContextWait bounds the static context fan-out.
	staticContextWait = 500 * time.Millisecond
)

// workspaceContext reads the first of contextFileNames at the workspace
// root and returns it as a prompt section ("" when there is none). An
// absent file is normal; any other failure is logged and skipped.
func workspaceContext(c *sdk.Call) string {
	for _, name := range contextFileNames {
		info, err := c.FSStat(name)
		if hostapi.CodeOf(err) == hostapi.CodeNotFound {
			continue
		}
		if err != nil {
			c.Log(hostapi.LogWarn, fmt.Sprintf("prompt builder: %s left out: %v", name, err))
			continue
		}
		if info.IsDir {
			continue
		}
		if info.Size > maxContextFileRead {
			c.Log(hostapi.LogWarn, fmt.Sprintf("prompt builder: %s is %d bytes; files over %d are left out", name, info.Size, maxContextFileRead))
			return fmt.Sprintf("# Project instructions (%s)\n\n[%s is %d bytes, too large to include]", name, name, info.Size)
		}
		b, err := c.FSRead(name)
		if err != nil {
			c.Log(hostapi.LogWarn, fmt.Sprintf("prompt builder: %s left out: %v", name, err))
			continue
		}
		text := strings.TrimSpace(string(b))
		if text == "" {
			continue
		}
		if len(text) > MaxContextFileBytes {
			c.Log(hostapi.LogWarn, fmt.Sprintf("prompt builder: %s is cut to %d bytes", name, MaxContextFileBytes))
		}
		return fmt.Sprintf("# Project instructions (%s)\n\n%s", name, cut(text, MaxContextFileBytes, name))
	}
	return ""
}

// staticContext is one static capsule's context files as a prompt section.
type staticContext struct {
	capsule string
	text    string
}

// staticContextAnswer is static.v1.response.context.<id>'s payload (the
// static engine's ContextResponse).
type staticContextAnswer struct {
	Capsule      string `json:"capsule"`
	RequestID    string `json:"request_id"`
	ContextFiles []struct {
		Name    string `json:"name"`
		File    string `json:"file"`
		Content string `json:"content"`
	} `json:"context_files"`
}

// staticContexts asks every capsule serving context files for them and
// returns their sections in dispatch order, once each has answered (on its
// own response topic, stamped by the kernel) or staticContextWait passed.
func staticContexts(c *sdk.Call, requestID string) ([]staticContext, error) {
	servers, err := c.Interceptors(staticContextRequestTopic)
	if err != nil {
		return nil, fmt.Errorf("who intercepts %s: %w", staticContextRequestTopic, err)
	}
	order := distinct(servers, "")
	if len(order) == 0 {
		return nil, nil
	}
	sub, err := c.Subscribe(staticContextResponsePrefix + "*")
	if err != nil {
		return nil, fmt.Errorf("subscribe static context: %w", err)
	}
	defer func() { _ = c.Unsubscribe(sub) }()
	if err := c.PublishJSON(staticContextRequestTopic, map[string]string{"request_id": requestID}); err != nil {
		return nil, fmt.Errorf("publish %s: %w", staticContextRequestTopic, err)
	}
	texts := map[string]string{}
	silent, err := sdk.Gather(c, sub, order, staticContextWait, func(msg hostapi.Message, awaited bool) bool {
		src := msg.SourceID
		if !awaited || msg.Topic != staticContextResponsePrefix+src {
			// Another capsule's topic, or a second answer: only a
			// capsule's own topic counts, and the kernel stamps who sent
			// it.
			return false
		}
		var ans staticContextAnswer
		if err := json.Unmarshal(msg.Payload, &ans); err != nil {
			c.Log(hostapi.LogWarn, fmt.Sprintf("prompt builder: static context of %s does not decode (ignored): %v", src, err))
			return true
		}
		if ans.RequestID != "" && ans.RequestID != requestID {
			return false // an answer to an earlier request
		}
		if text := contextSection(src, ans); text != "" {
			texts[src] = cut(text, MaxStaticContextBytes, "the context of "+src)
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("receive static context: %w", err)
	}
	for _, id := range silent {
		c.Log(hostapi.LogWarn, fmt.Sprintf("prompt builder: capsule %s did not answer %s within %v", id, staticContextRequestTopic, staticContextWait))
	}
	var out []staticContext
	for _, id := range order {
		if t, ok := texts[id]; ok {
			out = append(out, staticContext{capsule: id, text: t})
		}
	}
	return out, nil
}

// contextSection renders one capsule's context files as a prompt section
// ("" when they hold no text).
func contextSection(src string, ans staticContextAnswer) string {
	var b strings.Builder
	for _, f := range ans.ContextFiles {
		if strings.TrimSpace(f.Content) == "" {
			continue
		}
		fmt.Fprintf(&b, "# %s (from %s)\n\n%s\n\n", f.Name, src, strings.TrimSpace(f.Content))
	}
	return strings.TrimSpace(b.String())
}

// distinct is ids in their order, each once, without self.
func distinct(ids []string, self string) []string {
	var out []string
	for _, id := range ids {
		if id != self && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}
