package sessionclient

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/request"
	"github.com/astrid-go/astrid/internal/toolclient"
	"github.com/astrid-go/astrid/ipc"
)

// ClientID is the identity session requests are made under.
const ClientID = "astrid-cli-sessions"

// ACL lets the client send session requests and hear their scoped replies,
// and nothing else (no appends: history is written by the orchestrator).
func ACL() dispatch.CapsuleACL {
	return dispatch.CapsuleACL{
		ID:        ClientID,
		Publish:   []string{"session.v1.request.*"},
		Subscribe: []string{"session.v1.response.*"},
	}
}

// ErrNoStore is returned when no capsule serves session requests.
var ErrNoStore = errors.New("no session store is loaded (session.v1.request.* has no interceptor)")

// Summary is one session as list and get_meta describe it.
type Summary struct {
	SessionID       string `json:"session_id"`
	ParentSessionID string `json:"parent_session_id,omitempty"`
	MessageCount    int    `json:"message_count"`
	Preview         string `json:"preview"`
	Title           string `json:"title,omitempty"`
	CreatedAt       int64  `json:"created_at,omitempty"`
	UpdatedAt       int64  `json:"updated_at,omitempty"`
	UpdatedAtMs     int64  `json:"updated_at_ms,omitempty"`
	Workspace       string `json:"workspace,omitempty"`
	Archived        bool   `json:"archived"`
	// Usage sums the tokens of the model requests whose results the
	// session holds; CostUSD their prices where the agent knew them,
	// Unpriced set when some had none.
	Usage    *ipc.Usage `json:"usage,omitempty"`
	CostUSD  float64    `json:"cost_usd,omitempty"`
	Unpriced bool       `json:"unpriced,omitempty"`
}

// updated is when s was last written, in milliseconds (a record from
// before the store kept milliseconds: its seconds).
func (s Summary) updated() int64 {
	if s.UpdatedAtMs != 0 {
		return s.UpdatedAtMs
	}
	return s.UpdatedAt * 1000
}

// LastWritten is when s was last written (zero for a record that never
// said).
func (s Summary) LastWritten() time.Time {
	if ms := s.updated(); ms != 0 {
		return time.UnixMilli(ms)
	}
	return time.Time{}
}

// SortByTime orders list oldest first, newest last, by when each session
// was last written (ties by id, so the order is stable).
func SortByTime(list []Summary) {
	slices.SortStableFunc(list, func(a, b Summary) int {
		if c := cmp.Compare(a.updated(), b.updated()); c != 0 {
			return c
		}
		return strings.Compare(a.SessionID, b.SessionID)
	})
}

// Newest returns the session of list last written whose workspace is
// workspace; ok is false when there is none.
func Newest(list []Summary, workspace string) (s Summary, ok bool) {
	for _, x := range list {
		if x.Workspace == workspace && (!ok || x.updated() > s.updated() || x.updated() == s.updated() && x.SessionID > s.SessionID) {
			s, ok = x, true
		}
	}
	return s, ok
}

// SetWorkspace records the directory session id's turns work on, so
// that --continue can find it from there.
func SetWorkspace(ctx context.Context, k toolclient.Kernel, principal, id, workspace string) error {
	_, err := Ask(ctx, k, principal, "update", map[string]any{"session_id": id, "workspace": workspace})
	return err
}

// Ask sends req (an object; its correlation_id is set here) to
// session.v1.request.<op> for principal and returns the reply, or the
// reply's error as an error. ctx bounds the wait.
func Ask(ctx context.Context, k toolclient.Kernel, principal, op string, req map[string]any) (json.RawMessage, error) {
	topic := "session.v1.request." + op
	stores := k.Interceptors(topic)
	if len(stores) == 0 {
		return nil, ErrNoStore
	}
	corr := request.NewID("")
	caller := dispatch.Caller{Capsule: ClientID, Principal: principal}
	if req == nil {
		req = map[string]any{}
	}
	req["correlation_id"] = corr
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", op, err)
	}
	reply, err := request.Ask(ctx, k, caller, topic, body, ipc.SessionResponseTopic(op, corr), corr,
		func(source string) bool { return slices.Contains(stores, source) })
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", op, err)
	}
	var failed struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(reply, &failed) == nil && failed.Error != "" {
		// The store's error names the operation and the session already.
		return nil, errors.New(failed.Error)
	}
	return reply, nil
}

// List returns every session of principal, archived ones too when all.
func List(ctx context.Context, k toolclient.Kernel, principal string, all bool) ([]Summary, error) {
	var out []Summary
	cursor := ""
	for {
		reply, err := Ask(ctx, k, principal, "list", map[string]any{"cursor": cursor, "limit": 100, "include_archived": all})
		if err != nil {
			return nil, err
		}
		var page struct {
			Sessions   []Summary `json:"sessions"`
			NextCursor string    `json:"next_cursor"`
		}
		if err := json.Unmarshal(reply, &page); err != nil {
			return nil, fmt.Errorf("session list: malformed reply: %w", err)
		}
		out = append(out, page.Sessions...)
		if page.NextCursor == "" || page.NextCursor == cursor {
			return out, nil
		}
		cursor = page.NextCursor
	}
}

// Meta returns session id's summary; ok is false when there is none.
func Meta(ctx context.Context, k toolclient.Kernel, principal, id string) (s Summary, ok bool, err error) {
	reply, err := Ask(ctx, k, principal, "get_meta", map[string]any{"session_id": id})
	if err != nil {
		return s, false, err
	}
	var r struct {
		Session *Summary `json:"session"`
	}
	if err := json.Unmarshal(reply, &r); err != nil {
		return s, false, fmt.Errorf("session get_meta: malformed reply: %w", err)
	}
	if r.Session == nil {
		return s, false, nil
	}
	return *r.Session, true, nil
}

// Messages returns session id's messages.
func Messages(ctx context.Context, k toolclient.Kernel, principal, id string) ([]ipc.Message, error) {
	msgs, _, err := History(ctx, k, principal, id)
	return msgs, err
}

// Compaction is the agent's summary of a session's first Upto messages,
// which the model is sent in their place (docs/agent.md, "Context
// window").
type Compaction struct {
	Summary string `json:"summary"`
	Upto    int    `json:"upto"`
}

// History is session id's messages and its compaction (nil when it has
// none).
func History(ctx context.Context, k toolclient.Kernel, principal, id string) ([]ipc.Message, *Compaction, error) {
	reply, err := Ask(ctx, k, principal, "get_messages", map[string]any{"session_id": id})
	if err != nil {
		return nil, nil, err
	}
	var r struct {
		Messages   []ipc.Message `json:"messages"`
		Compaction *Compaction   `json:"compaction"`
	}
	if err := json.Unmarshal(reply, &r); err != nil {
		return nil, nil, fmt.Errorf("session get_messages: malformed reply: %w", err)
	}
	return r.Messages, r.Compaction, nil
}

// Delete removes session id; deleted is false when there was none.
func Delete(ctx context.Context, k toolclient.Kernel, principal, id string) (deleted bool, err error) {
	reply, err := Ask(ctx, k, principal, "delete", map[string]any{"session_id": id})
	if err != nil {
		return false, err
	}
	var r struct {
		Deleted bool `json:"deleted"`
	}
	if err := json.Unmarshal(reply, &r); err != nil {
		return false, fmt.Errorf("session delete: malformed reply: %w", err)
	}
	return r.Deleted, nil
}

// ValidSessionID reports why id cannot name a session: the store's
// alphabet is ASCII letters, digits, '_' and '-', 1 to 64 of them (a
// session id becomes a KV key and a topic-safe name).
func ValidSessionID(id string) error {
	if id == "" || len(id) > 64 {
		return fmt.Errorf("session id %.40q: want 1 to 64 characters, not %d", id, len(id))
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("session id %q has %q at byte %d; a session id uses only ASCII letters, digits, '_' and '-'", id, c, i)
		}
	}
	return nil
}

// UndoResult is the undo capsule's answer (capsules/undo.Reply).
type UndoResult struct {
	Turn  int `json:"turn"`
	Turns int `json:"turns"`
	Files []struct {
		Path     string `json:"path"`
		Restored bool   `json:"restored"`
		What     string `json:"what"`
	} `json:"files"`
	Shell bool `json:"shell,omitempty"`
}

// UndoTurn is one turn undo keeps (capsules/undo.Kept).
type UndoTurn struct {
	Turn   int      `json:"turn"`
	Files  []string `json:"files"`
	Shell  bool     `json:"shell,omitempty"`
	Undone bool     `json:"undone,omitempty"`
}

// UndoList returns the turns of session id that undo keeps, oldest first.
func UndoList(ctx context.Context, k toolclient.Kernel, principal, id string) ([]UndoTurn, error) {
	reply, err := Ask(ctx, k, principal, "undo", map[string]any{"session_id": id, "list": true})
	if errors.Is(err, ErrNoStore) {
		return nil, errors.New("undo is not available: no capsule serves session.v1.request.undo (astrid-capsule-undo is not loaded)")
	}
	if err != nil {
		return nil, err
	}
	var r struct {
		Kept []UndoTurn `json:"kept"`
	}
	if err := json.Unmarshal(reply, &r); err != nil {
		return nil, fmt.Errorf("session undo --list: malformed reply: %w", err)
	}
	return r.Kept, nil
}

// Undo asks for session id's turn (0: the latest not undone) to be
// undone: the files the fs tools changed in it restored.
func Undo(ctx context.Context, k toolclient.Kernel, principal, id string, turn int) (UndoResult, error) {
	reply, err := Ask(ctx, k, principal, "undo", map[string]any{"session_id": id, "turn": turn})
	if errors.Is(err, ErrNoStore) {
		return UndoResult{}, errors.New("undo is not available: no capsule serves session.v1.request.undo (astrid-capsule-undo is not loaded)")
	}
	if err != nil {
		return UndoResult{}, err
	}
	var r UndoResult
	if err := json.Unmarshal(reply, &r); err != nil {
		return UndoResult{}, fmt.Errorf("session undo: malformed reply: %w", err)
	}
	return r, nil
}
