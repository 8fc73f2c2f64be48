package session

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/ipc"
	"github.com/astrid-go/astrid/sdk"
)

// SchemaVersion is the version of the record this capsule writes: 2 adds
// timestamps, title, archived and meta to v1's parent and messages. A v1
// record is read as is and written back as v2.
const SchemaVersion = 2

// MaxMetaBytes bounds a session's opaque client meta.
const MaxMetaBytes = 8 << 10

// keyPrefix prefixes every session record's KV key.
const keyPrefix = "session.data."

// MaxWorkspaceBytes bounds a session's workspace path.
const MaxWorkspaceBytes = 4096

// maxIDBytes bounds a session id (and so a KV key and a reply payload).
const maxIDBytes = 64

// Record is one session as stored in KV. A record without schema_version
// is read as an old one and written back with the current version.
type Record struct {
	SchemaVersion   int           `json:"schema_version"`
	ParentSessionID string        `json:"parent_session_id,omitempty"`
	Messages        []ipc.Message `json:"messages"`
	// CreatedAt and UpdatedAt are unix seconds of the host clock, set by
	// save (0 in a record written before v2).
	CreatedAt int64 `json:"created_at,omitempty"`
	UpdatedAt int64 `json:"updated_at,omitempty"`
	// UpdatedAtMs is UpdatedAt in milliseconds, which orders sessions
	// written within one second (0 in a record written before it).
	UpdatedAtMs int64  `json:"updated_at_ms,omitempty"`
	Title       string `json:"title,omitempty"`
	// Workspace is the directory the session's turns work on, as the
	// frontend that started it said (update); "" when none did.
	Workspace string `json:"workspace,omitempty"`
	Archived  bool   `json:"archived"`
	// Meta is a client's opaque JSON string, at most MaxMetaBytes.
	Meta string `json:"meta,omitempty"`
	// Usage sums the tokens of the model requests whose results are in
	// Messages (as the agent reported them with each append); CostUSD sums
	// their prices where known, and Unpriced says some had none.
	Usage    *ipc.Usage `json:"usage,omitempty"`
	CostUSD  float64    `json:"cost_usd,omitempty"`
	Unpriced bool       `json:"unpriced,omitempty"`
	// Compaction, when set, is the summary the agent sends instead of the
	// first Compaction.Upto messages (which stay here).
	Compaction *Compaction `json:"compaction,omitempty"`
}

// Key is the KV key of session id's record.
func Key(id string) string { return keyPrefix + id }

// ValidateID checks a session id: 1 to 64 of [A-Za-z0-9_-]. Dots and
// slashes are refused because an id becomes part of a KV key (and, in a
// frontend, of a path or topic); a clear refusal beats a silent rewrite.
func ValidateID(id string) error {
	if id == "" {
		return fmt.Errorf("session id is empty")
	}
	if len(id) > maxIDBytes {
		return fmt.Errorf("session id %.40q… is %d bytes, the limit is %d", id, len(id), maxIDBytes)
	}
	for i := 0; i < len(id); i++ {
		if b := id[i]; !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == '-') {
			return fmt.Errorf("session id %q has %q; a session id uses only ASCII letters, digits, '_' and '-'", id, b)
		}
	}
	return nil
}

// load reads session id's record. A missing record is an empty one; one
// that does not decode, or was written by a newer schema, is logged and
// read as empty (fail-secure: never guess at a layout this code does not
// know), and the next write replaces it.
func load(c *sdk.Call, id string) (Record, error) {
	r, _, err := loadFound(c, id)
	return r, err
}

// loadFound is load that also reports whether the record exists (one that
// is read as empty still exists: the next write replaces it).
func loadFound(c *sdk.Call, id string) (Record, bool, error) {
	raw, ok, err := c.KVGet(Key(id))
	if err != nil {
		return Record{}, false, fmt.Errorf("session %q: read: %w", id, err)
	}
	if !ok {
		return Record{SchemaVersion: SchemaVersion}, false, nil
	}
	return decodeRecord(c, id, raw), true, nil
}

// decodeRecord reads a stored record by load's rules.
func decodeRecord(c *sdk.Call, id string, raw []byte) Record {
	var r Record
	if err := json.Unmarshal(raw, &r); err != nil {
		c.Log(hostapi.LogWarn, fmt.Sprintf("session: record %q does not decode, starting it fresh: %v", id, err))
		return Record{SchemaVersion: SchemaVersion}
	}
	switch {
	case r.SchemaVersion == 0:
		r.SchemaVersion = SchemaVersion
	case r.SchemaVersion > SchemaVersion:
		c.Log(hostapi.LogWarn, fmt.Sprintf("session: record %q has schema_version %d, newer than %d; starting it fresh", id, r.SchemaVersion, SchemaVersion))
		return Record{SchemaVersion: SchemaVersion}
	}
	return r
}

// save writes session id's record, stamping its times.
func save(c *sdk.Call, id string, r Record) error {
	r.SchemaVersion = SchemaVersion
	t := c.Now()
	now := t.Unix()
	if r.CreatedAt == 0 {
		r.CreatedAt = now
	}
	r.UpdatedAt = now
	r.UpdatedAtMs = t.UnixMilli()
	if r.Messages == nil {
		r.Messages = []ipc.Message{}
	}
	raw, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("session %q: encode: %w", id, err)
	}
	if err := c.KVSet(Key(id), raw); err != nil {
		return fmt.Errorf("session %q: write: %w", id, err)
	}
	return nil
}

// exists reports whether session id has a record.
func exists(c *sdk.Call, id string) (bool, error) {
	_, ok, err := c.KVGet(Key(id))
	if err != nil {
		return false, fmt.Errorf("session %q: read: %w", id, err)
	}
	return ok, nil
}

// appendMessages adds msgs to the end of session id's record, and usage
// and cost to its totals, and announces it; an empty list writes nothing.
func appendMessages(c *sdk.Call, id string, msgs []ipc.Message, usage *ipc.Usage, cost *float64) error {
	if len(msgs) == 0 {
		return nil
	}
	r, found, err := loadFound(c, id)
	if err != nil {
		return err
	}
	r.Messages = append(r.Messages, msgs...)
	if usage != nil {
		sum := *usage
		if r.Usage != nil {
			sum = r.Usage.Add(*usage)
		}
		r.Usage = &sum
		if cost != nil && *cost >= 0 && !math.IsInf(*cost, 0) {
			r.CostUSD += *cost
		} else {
			r.Unpriced = true
		}
	}
	if err := save(c, id, r); err != nil {
		return err
	}
	kind := EventUpdated
	if !found {
		kind = EventCreated
	}
	announce(c, kind, id)
	return nil
}
