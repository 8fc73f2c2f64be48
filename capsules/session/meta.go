package session

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// Topics and ops of the v0.2 listing requests (spec §7.1).
const (
	ListTopic    = "session.v1.request.list"
	GetMetaTopic = "session.v1.request.get_meta"
	DeleteTopic  = "session.v1.request.delete"

	OpList    = "list"
	OpGetMeta = "get_meta"
	OpDelete  = "delete"
)

// Page sizes of list: the default and the most one call returns.
const (
	DefaultListLimit = 50
	MaxListLimit     = 200
)

// PreviewRunes bounds a summary's preview.
const PreviewRunes = 80

// Summary describes one session without its messages.
type Summary struct {
	SessionID       string `json:"session_id"`
	ParentSessionID string `json:"parent_session_id,omitempty"`
	MessageCount    int    `json:"message_count"`
	// Preview is the first user message's text, whitespace folded, at most
	// PreviewRunes runes (an ellipsis marks a cut).
	Preview     string `json:"preview"`
	Title       string `json:"title,omitempty"`
	CreatedAt   int64  `json:"created_at,omitempty"`
	UpdatedAt   int64  `json:"updated_at,omitempty"`
	UpdatedAtMs int64  `json:"updated_at_ms,omitempty"`
	Workspace   string `json:"workspace,omitempty"`
	Archived    bool   `json:"archived"`
	Meta        string `json:"meta,omitempty"`
	// Usage, CostUSD and Unpriced are the record's totals (Record).
	Usage    *ipc.Usage `json:"usage,omitempty"`
	CostUSD  float64    `json:"cost_usd,omitempty"`
	Unpriced bool       `json:"unpriced,omitempty"`
}

// ListReply answers list: one page of summaries in session id order.
// NextCursor, when not empty, is the cursor of the next page; Total counts
// every session of the principal, archived ones included (counting only
// the others would mean reading every record on every page).
type ListReply struct {
	CorrelationID string    `json:"correlation_id"`
	Sessions      []Summary `json:"sessions"`
	NextCursor    string    `json:"next_cursor"`
	Total         int       `json:"total"`
}

// MetaReply answers get_meta; Session is null for a session without a
// record.
type MetaReply struct {
	CorrelationID string   `json:"correlation_id"`
	Session       *Summary `json:"session"`
}

// UpdateTopic and OpUpdate: set a session's title, archived flag or meta.
const (
	UpdateTopic = "session.v1.request.update"
	OpUpdate    = "update"
)

// updateRequest is update's payload: an absent field is left alone, a
// present empty string clears title, meta or workspace.
type updateRequest struct {
	Title     *string `json:"title"`
	Archived  *bool   `json:"archived"`
	Meta      *string `json:"meta"`
	Workspace *string `json:"workspace"`
}

// DeleteReply answers delete; Deleted is false when there was no record.
type DeleteReply struct {
	CorrelationID string `json:"correlation_id"`
	Deleted       bool   `json:"deleted"`
}

// listRequest is list's payload.
type listRequest struct {
	Cursor          string `json:"cursor"`
	Limit           int    `json:"limit"`
	IncludeArchived bool   `json:"include_archived"`
}

func summarize(id string, r Record) Summary {
	s := Summary{SessionID: id, ParentSessionID: r.ParentSessionID, MessageCount: len(r.Messages),
		Title: r.Title, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, UpdatedAtMs: r.UpdatedAtMs,
		Workspace: r.Workspace, Archived: r.Archived, Meta: r.Meta, Usage: r.Usage, CostUSD: r.CostUSD, Unpriced: r.Unpriced}
	for _, m := range r.Messages {
		if t, ok := m.Text(); ok && m.Role == ipc.RoleUser {
			s.Preview = preview(t)
			break
		}
	}
	return s
}

// preview folds runs of whitespace to one space and cuts text to
// PreviewRunes runes, on a rune boundary.
func preview(text string) string {
	text = strings.Join(strings.FieldsFunc(text, unicode.IsSpace), " ")
	if utf8.RuneCountInString(text) <= PreviewRunes {
		return text
	}
	cut, n := 0, 0
	for i := range text {
		if n == PreviewRunes-1 {
			cut = i
			break
		}
		n++
	}
	return text[:cut] + "…"
}

func handleList(c *sdk.Call) error {
	req, topic, ok, err := replyTo(c, OpList, c.Payload())
	if !ok {
		return err
	}
	var page listRequest
	if err := c.Decode(&page); err != nil {
		return fail(c, topic, req.CorrelationID, "session: list: "+err.Error())
	}
	reply, err := listPage(c, page)
	if err != nil {
		return fail(c, topic, req.CorrelationID, "session: list: "+err.Error())
	}
	reply.CorrelationID = req.CorrelationID
	return c.PublishJSON(topic, reply)
}

func handleGetMeta(c *sdk.Call) error {
	req, topic, ok, err := replyTo(c, OpGetMeta, c.Payload())
	if !ok {
		return err
	}
	if err := ValidateID(req.SessionID); err != nil {
		return fail(c, topic, req.CorrelationID, "session: get_meta: "+err.Error())
	}
	r, found, err := loadFound(c, req.SessionID)
	if err != nil {
		return fail(c, topic, req.CorrelationID, "session: get_meta: "+err.Error())
	}
	reply := MetaReply{CorrelationID: req.CorrelationID}
	if found {
		s := summarize(req.SessionID, r)
		reply.Session = &s
	}
	return c.PublishJSON(topic, reply)
}

func handleDelete(c *sdk.Call) error {
	req, topic, ok, err := replyTo(c, OpDelete, c.Payload())
	if !ok {
		return err
	}
	if err := ValidateID(req.SessionID); err != nil {
		return fail(c, topic, req.CorrelationID, "session: delete: "+err.Error())
	}
	found, err := exists(c, req.SessionID)
	if err != nil {
		return fail(c, topic, req.CorrelationID, "session: delete: "+err.Error())
	}
	if found {
		if err := c.KVDelete(Key(req.SessionID)); err != nil {
			return fail(c, topic, req.CorrelationID, "session: delete: "+err.Error())
		}
		announce(c, EventDeleted, req.SessionID)
	}
	return c.PublishJSON(topic, DeleteReply{CorrelationID: req.CorrelationID, Deleted: found})
}

func handleUpdate(c *sdk.Call) error {
	req, topic, ok, err := replyTo(c, OpUpdate, c.Payload())
	if !ok {
		return err
	}
	if err := ValidateID(req.SessionID); err != nil {
		return fail(c, topic, req.CorrelationID, "session: update: "+err.Error())
	}
	var u updateRequest
	if err := c.Decode(&u); err != nil {
		return fail(c, topic, req.CorrelationID, "session: update: "+err.Error())
	}
	if u.Meta != nil && len(*u.Meta) > MaxMetaBytes {
		return fail(c, topic, req.CorrelationID, fmt.Sprintf("session: update: meta is %d bytes, the limit is %d", len(*u.Meta), MaxMetaBytes))
	}
	if u.Workspace != nil && len(*u.Workspace) > MaxWorkspaceBytes {
		return fail(c, topic, req.CorrelationID, fmt.Sprintf("session: update: workspace is %d bytes, the limit is %d", len(*u.Workspace), MaxWorkspaceBytes))
	}
	r, found, err := loadFound(c, req.SessionID)
	if err != nil {
		return fail(c, topic, req.CorrelationID, "session: update: "+err.Error())
	}
	if !found {
		return fail(c, topic, req.CorrelationID, fmt.Sprintf("session: update: no session %q", req.SessionID))
	}
	if u.Title != nil {
		r.Title = *u.Title
	}
	if u.Archived != nil {
		r.Archived = *u.Archived
	}
	if u.Meta != nil {
		r.Meta = *u.Meta
	}
	if u.Workspace != nil {
		r.Workspace = *u.Workspace
	}
	if err := save(c, req.SessionID, r); err != nil {
		return fail(c, topic, req.CorrelationID, "session: update: "+err.Error())
	}
	announce(c, EventUpdated, req.SessionID)
	r, err = load(c, req.SessionID)
	if err != nil {
		return fail(c, topic, req.CorrelationID, "session: update: "+err.Error())
	}
	s := summarize(req.SessionID, r)
	return c.PublishJSON(topic, MetaReply{CorrelationID: req.CorrelationID, Session: &s})
}

// listPage reads one page of summaries.
func listPage(c *sdk.Call, page listRequest) (ListReply, error) {
	limit := page.Limit
	switch {
	case limit <= 0:
		limit = DefaultListLimit
	case limit > MaxListLimit:
		limit = MaxListLimit
	}
	keys, err := c.KVList(keyPrefix)
	if err != nil {
		return ListReply{}, err
	}
	reply := ListReply{Sessions: []Summary{}, Total: len(keys)}
	// Keys come sorted by bytes, so the cursor is the last id returned.
	for _, key := range keys {
		id := strings.TrimPrefix(key, keyPrefix)
		if page.Cursor != "" && id <= page.Cursor {
			continue
		}
		if len(reply.Sessions) == limit {
			reply.NextCursor = reply.Sessions[limit-1].SessionID
			break
		}
		r, err := load(c, id)
		if err != nil {
			return ListReply{}, err
		}
		if r.Archived && !page.IncludeArchived {
			continue
		}
		reply.Sessions = append(reply.Sessions, summarize(id, r))
	}
	return reply, nil
}
