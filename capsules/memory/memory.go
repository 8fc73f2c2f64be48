package memory

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// Manifest is the memory capsule's Capsule.toml.
//
//go:embed Capsule.toml
var Manifest []byte

// The prompt builder's hook convention (capsules/promptbuilder, which a
// built-in may not import).
const (
	beforeBuildTopic    = "prompt_builder.v1.hook.before_build"
	hookResponsePattern = "prompt_builder.v1.hook_response.*"
)

// Recall's page sizes, and how much context the hook offers at most.
const (
	defaultRecall   = 5
	maxRecall       = 50
	maxContextBytes = 4 << 10
)

type rememberArgs struct {
	Text string `json:"text" desc:"what to remember, in a sentence or a short paragraph"`
}

type recallArgs struct {
	Query string `json:"query" desc:"words to look for"`
	Limit int    `json:"limit,omitempty" desc:"at most this many notes (default 5, max 50)"`
}

type forgetArgs struct {
	ID string `json:"id" desc:"the note's id, as remember or recall gave it"`
}

// New returns the memory capsule's code.
func New() *sdk.Capsule {
	c := sdk.New("Durable per-principal notes the agent can remember, recall and forget")
	sdk.Tool(c, "remember", "Save a note to remember in later conversations (a fact about the user or the project, a decision, a preference). Returns the note's id.", remember)
	sdk.Tool(c, "recall", "Search the notes saved earlier by words; returns the best matches with their ids, as JSON.", recallTool)
	sdk.Tool(c, "forget", "Delete a saved note by its id.", forget)
	c.Handle(beforeBuildTopic, "handle_before_build", handleBeforeBuild)
	c.Publishes(hookResponsePattern)
	return c
}

func remember(c *sdk.Call, a rememberArgs) (string, error) {
	n, err := saveNote(c, a.Text)
	if err != nil {
		return "", fmt.Errorf("remember: %w", err)
	}
	return "Remembered as note " + n.ID + ".", nil
}

func recallTool(c *sdk.Call, a recallArgs) (string, error) {
	limit := a.Limit
	switch {
	case limit <= 0:
		limit = defaultRecall
	case limit > maxRecall:
		limit = maxRecall
	}
	if strings.TrimSpace(a.Query) == "" {
		return "", fmt.Errorf("recall: the query is empty")
	}
	notes, err := recall(c, a.Query, limit)
	if err != nil {
		return "", fmt.Errorf("recall: %w", err)
	}
	if notes == nil {
		notes = []Note{}
	}
	b, err := json.Marshal(notes)
	return string(b), err
}

func forget(c *sdk.Call, a forgetArgs) (string, error) {
	if a.ID == "" || strings.ContainsAny(a.ID, ".*>") || len(a.ID) > 64 {
		return "", fmt.Errorf("forget: %q is not a note id", a.ID)
	}
	ok, err := deleteNote(c, a.ID)
	if err != nil {
		return "", fmt.Errorf("forget: %w", err)
	}
	if !ok {
		return "", fmt.Errorf("forget: there is no note %s", a.ID)
	}
	return "Forgot note " + a.ID + ".", nil
}

// hookRequest is the part of the prompt builder's before_build request
// the hook reads.
type hookRequest struct {
	Messages      []ipc.Message `json:"messages"`
	ResponseTopic string        `json:"response_topic"`
}

// handleBeforeBuild offers the notes most relevant to the person's latest
// message as context the person could see (prependContext). It always
// answers, with nothing when no note is relevant, so the prompt builder
// never waits for it.
func handleBeforeBuild(c *sdk.Call) error {
	var req hookRequest
	if err := c.Decode(&req); err != nil || !strings.HasPrefix(req.ResponseTopic, strings.TrimSuffix(hookResponsePattern, "*")) {
		return nil // not the prompt builder's request: nowhere to answer
	}
	answer := map[string]string{} // {}: nothing to add this time
	if text := contextFor(c, latestUserText(req.Messages)); text != "" {
		answer["prependContext"] = text
	}
	return c.PublishJSON(req.ResponseTopic, answer)
}

func latestUserText(msgs []ipc.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == ipc.RoleUser {
			if t, ok := msgs[i].Text(); ok {
				return t
			}
		}
	}
	return ""
}

// contextFor is the notes relevant to text, as context, or "".
func contextFor(c *sdk.Call, text string) string {
	n := 3
	if s, ok := c.Config("context_notes"); ok && s != "" {
		if v, err := strconv.Atoi(s); err == nil && v >= 0 {
			n = min(v, maxRecall)
		}
	}
	if n == 0 || strings.TrimSpace(text) == "" {
		return ""
	}
	notes, err := recall(c, text, n)
	if err != nil {
		c.Log(hostapi.LogWarn, "memory: no notes offered to the prompt: "+err.Error())
		return ""
	}
	if len(notes) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Notes you saved earlier (memory; recall finds more, forget deletes one):\n")
	for _, n := range notes {
		line := "- [" + n.ID + "] " + n.Text + "\n"
		if b.Len()+len(line) > maxContextBytes {
			break
		}
		b.WriteString(line)
	}
	return b.String()
}
