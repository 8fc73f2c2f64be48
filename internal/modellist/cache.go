package modellist

import (
	"encoding/json"
	"strconv"
	"time"
)

// The bounds on a server's list (docs/rationale/providers.md, "Which
// models does a provider list, and when does it ask its server?").
const (
	// FetchTimeout bounds the request; the registry waits longer than
	// this for a describe that asks to refresh.
	FetchTimeout = 2 * time.Second
	// MaxAge is how long a list read is not asked for again by a
	// refreshing describe.
	MaxAge = time.Minute
	// MaxBody bounds the bytes of a list's answer; MaxModels the ids kept.
	MaxBody   = 1 << 20
	MaxModels = 200
)

// Cache is a server's list as last read, kept in the principal's durable
// KV so that a model a person chose from it stays offered in the next
// process.
type Cache struct {
	// Source tells the server and key the list was read with apart
	// (Source(); the key itself is never stored).
	Source        string   `json:"source"`
	Models        []string `json:"models"`
	FetchedUnixMs int64    `json:"fetched_unix_ms"`
	// Windows are the context windows the list gave, by model id; a model
	// the list gave none for is absent.
	Windows map[string]uint64 `json:"windows,omitempty"`
}

// Source identifies a server and the credentials a list belongs to: an
// FNV-1a hash of both (the list is no secret; the hash only tells keys
// apart without storing one).
func Source(baseURL, apiKey string) string {
	h := uint64(14695981039346656037)
	for _, b := range []byte(baseURL + "\x00" + apiKey) {
		h ^= uint64(b)
		h *= 1099511628211
	}
	return strconv.FormatUint(h, 16)
}

// Decode reads a kept record, reporting false when it is unreadable,
// empty or was read from another server or with another key (source).
func Decode(b []byte, source string) (Cache, bool) {
	var m Cache
	if json.Unmarshal(b, &m) != nil || m.Source != source || len(m.Models) == 0 {
		return Cache{}, false
	}
	return m, true
}

// Stale reports whether a list read at c.FetchedUnixMs is due to be asked
// for again at now.
func (c Cache) Stale(now time.Time) bool {
	return now.Sub(time.UnixMilli(c.FetchedUnixMs)) >= MaxAge
}

// Dedup keeps the first of each id, in order.
func Dedup(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
