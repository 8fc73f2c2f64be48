package session

import (
	"encoding/json"
	"fmt"

	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// The agent's tools over its own principal's history (spec §7.1 v0.2).
// They read only: none is mutable. The limits are a model's page sizes.
const (
	DefaultThreadMessages = 50
	MaxThreadMessages     = 200
)

type listThreadsArgs struct {
	IncludeArchived bool `json:"include_archived,omitempty" desc:"also list archived conversations"`
	Limit           int  `json:"limit,omitempty" desc:"at most this many (default 50, max 200)"`
}

type getThreadArgs struct {
	SessionID string `json:"session_id" desc:"id of the conversation, as list_threads or search_conversations gives it"`
	Limit     int    `json:"limit,omitempty" desc:"only the last this many messages (default 50, max 200)"`
}

type searchConversationsArgs struct {
	Query           string `json:"query" desc:"text to look for, case-insensitive"`
	IncludeArchived bool   `json:"include_archived,omitempty" desc:"also search archived conversations"`
	Limit           int    `json:"limit,omitempty" desc:"at most this many conversations (default 20, max 100)"`
}

// registerTools adds the agent tools to c.
func registerTools(c *sdk.Capsule) {
	sdk.Tool(c, "list_threads", "List the user's past conversations (id, title, message count, first question), as JSON.", listThreads)
	sdk.Tool(c, "get_thread", "Read the messages of one past conversation, as JSON.", getThread)
	sdk.Tool(c, "search_conversations", "Search the user's past conversations for text; returns matching conversation ids with a snippet, as JSON.", searchConversations)
}

func listThreads(c *sdk.Call, a listThreadsArgs) (string, error) {
	page, err := listPage(c, listRequest{Limit: a.Limit, IncludeArchived: a.IncludeArchived})
	if err != nil {
		return "", fmt.Errorf("list_threads: %w", err)
	}
	return jsonString(page)
}

func getThread(c *sdk.Call, a getThreadArgs) (string, error) {
	if err := ValidateID(a.SessionID); err != nil {
		return "", fmt.Errorf("get_thread: %w", err)
	}
	r, found, err := loadFound(c, a.SessionID)
	if err != nil {
		return "", fmt.Errorf("get_thread: %w", err)
	}
	if !found {
		return "", fmt.Errorf("get_thread: no conversation %q", a.SessionID)
	}
	limit := a.Limit
	switch {
	case limit <= 0:
		limit = DefaultThreadMessages
	case limit > MaxThreadMessages:
		limit = MaxThreadMessages
	}
	msgs := r.Messages
	if len(msgs) > limit {
		msgs = msgs[len(msgs)-limit:]
	}
	return jsonString(struct {
		Summary  Summary       `json:"summary"`
		Messages []ipc.Message `json:"messages"`
	}{summarize(a.SessionID, r), msgs})
}

func searchConversations(c *sdk.Call, a searchConversationsArgs) (string, error) {
	page, err := searchPage(c, searchRequest{Query: a.Query, Limit: a.Limit, IncludeArchived: a.IncludeArchived})
	if err != nil {
		return "", fmt.Errorf("search_conversations: %w", err)
	}
	return jsonString(page)
}

func jsonString(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
