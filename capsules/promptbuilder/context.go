package promptbuilder

import (
	"encoding/json"
	"errors"
	"fmt"
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
	waiting := map[string]bool{}
	var order []string
	for _, id := range servers {
		if !waiting[id] {
			waiting[id] = true
			order = append(order, id)
		}
	}
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
	deadline := c.Now().Add(staticContextWait)
	for len(waiting) > 0 {
		left := deadline.Sub(c.Now())
		if left <= 0 {
			break
		}
		msg, err := c.Recv(sub, left)
		if errors.Is(err, hostapi.ErrTimeout) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("receive static context: %w", err)
		}
		src := msg.SourceID
		if !waiting[src] || msg.Topic != staticContextResponsePrefix+src {
			// Another capsule's topic, or an answer to another request:
			// only a capsule's own topic counts, and the kernel stamps
			// who sent it.
			continue
		}
		var ans staticContextAnswer
		if err := json.Unmarshal(msg.Payload, &ans); err != nil {
			c.Log(hostapi.LogWarn, fmt.Sprintf("prompt builder: static context of %s does not decode (ignored): %v", src, err))
			delete(waiting, src)
			continue
		}
		if ans.RequestID != "" && ans.RequestID != requestID {
			continue
		}
		delete(waiting, src)
		var b strings.Builder
		for _, f := range ans.ContextFiles {
			if strings.TrimSpace(f.Content) == "" {
				continue
			}
			fmt.Fprintf(&b, "# %s (from %s)\n\n%s\n\n", f.Name, src, strings.TrimSpace(f.Content))
		}
		if text := strings.TrimSpace(b.String()); text != "" {
			texts[src] = cut(text, MaxStaticContextBytes, "the context of "+src)
		}
	}
	var out []staticContext
	for _, id := range order {
		if waiting[id] {
			c.Log(hostapi.LogWarn, fmt.Sprintf("prompt builder: capsule %s did not answer %s within %v", id, staticContextRequestTopic, staticContextWait))
			continue
		}
		if t, ok := texts[id]; ok {
			out = append(out, staticContext{capsule: id, text: t})
		}
	}
	return out, nil
}
