package undo

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/sdk"
)

// KV layout, in the invoking principal's namespace:
//
//	turn/<session>/<seq, 6 digits>  turnRecord (durable)
//	blob/<session>/<sha-256 hex>     a prior content (durable)
//	~call/<call id>                  callRecord (volatile)
const (
	turnPrefix = "turn/"
	blobPrefix = "blob/"
	callPrefix = "~call/"
)

// State words of a fileRecord's Before and After besides a content hash.
const (
	absent   = "absent"   // no file there
	dir      = "dir"      // a directory there
	tooLarge = "toolarge" // a file over MaxFileBytes, not kept
	unknown  = ""         // not seen (yet)
)

// fileRecord is one file a turn changed: what it was before the turn's
// first change and what the turn's last change left.
type fileRecord struct {
	Path   string `json:"path"`
	Before string `json:"before"`
	After  string `json:"after"`
	// Size is the prior content's size (for a too large one too).
	Size int64 `json:"size,omitempty"`
}

// turnRecord is a turn that changed files.
type turnRecord struct {
	Seq    int          `json:"seq"`
	TurnID string       `json:"turn_id"`
	Files  []fileRecord `json:"files"`
	// Shell: the turn ran a shell command, whose changes are not kept.
	Shell  bool `json:"shell,omitempty"`
	Undone bool `json:"undone,omitempty"`
}

// callRecord ties a tool call to its turn, and lists the paths it may
// change once its request was seen.
type callRecord struct {
	Session string   `json:"session"`
	TurnID  string   `json:"turn_id"`
	Paths   []string `json:"paths,omitempty"`
}

func turnKey(session string, seq int) string {
	return fmt.Sprintf("%s%s/%06d", turnPrefix, session, seq)
}

// turns lists session's records, oldest first.
func turns(c *sdk.Call, session string) ([]turnRecord, error) {
	keys, err := c.KVList(turnPrefix + session + "/")
	if err != nil {
		return nil, fmt.Errorf("undo: list the turns of session %q: %w", session, err)
	}
	sort.Strings(keys)
	var out []turnRecord
	for _, k := range keys {
		raw, ok, err := c.KVGet(k)
		if err != nil {
			return nil, fmt.Errorf("undo: read %s: %w", k, err)
		}
		var r turnRecord
		if !ok || json.Unmarshal(raw, &r) != nil {
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

// turnOf returns session's record of turnID, made (and the oldest
// dropped past MaxTurns) when there is none yet.
func turnOf(c *sdk.Call, session, turnID string) (turnRecord, error) {
	all, err := turns(c, session)
	if err != nil {
		return turnRecord{}, err
	}
	for _, r := range all {
		if r.TurnID == turnID {
			return r, nil
		}
	}
	seq := 1
	if len(all) > 0 {
		seq = all[len(all)-1].Seq + 1
	}
	for len(all) >= MaxTurns {
		if err := dropTurn(c, session, all[0], all[1:]); err != nil {
			return turnRecord{}, err
		}
		all = all[1:]
	}
	return turnRecord{Seq: seq, TurnID: turnID}, nil
}

func saveTurn(c *sdk.Call, session string, r turnRecord) error {
	raw, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("undo: encode turn %d: %w", r.Seq, err)
	}
	if err := c.KVSet(turnKey(session, r.Seq), raw); err != nil {
		return fmt.Errorf("undo: keep turn %d of session %q: %w", r.Seq, session, err)
	}
	return nil
}

// dropTurn forgets r and the prior contents no other record of session
// (rest) refers to.
func dropTurn(c *sdk.Call, session string, r turnRecord, rest []turnRecord) error {
	used := map[string]bool{}
	for _, o := range rest {
		for _, f := range o.Files {
			used[f.Before] = true
		}
	}
	for _, f := range r.Files {
		if isHash(f.Before) && !used[f.Before] {
			if err := c.KVDelete(blobPrefix + session + "/" + f.Before); err != nil {
				return fmt.Errorf("undo: drop a prior content of session %q: %w", session, err)
			}
		}
	}
	if err := c.KVDelete(turnKey(session, r.Seq)); err != nil {
		return fmt.Errorf("undo: drop turn %d of session %q: %w", r.Seq, session, err)
	}
	c.Log(hostapi.LogInfo, fmt.Sprintf("undo: session %q: turn %d's record dropped (at most %d turns or %d MiB are kept)", session, r.Seq, MaxTurns, MaxSessionBytes>>20))
	return nil
}

// keptBytes sums the prior contents session keeps.
func keptBytes(all []turnRecord) int64 {
	seen := map[string]bool{}
	var n int64
	for _, r := range all {
		for _, f := range r.Files {
			if isHash(f.Before) && !seen[f.Before] {
				seen[f.Before] = true
				n += f.Size
			}
		}
	}
	return n
}

// state says what is at path now: absent, dir, a content hash, or
// toolarge for a file over what is read. It returns the content when it
// read it.
func state(c *sdk.Call, path string) (st string, size int64, data []byte, err error) {
	fi, err := c.FSStat(path)
	if err != nil {
		if hostapi.CodeOf(err) == hostapi.CodeNotFound {
			return absent, 0, nil, nil
		}
		return "", 0, nil, err
	}
	if fi.IsDir {
		return dir, 0, nil, nil
	}
	if fi.Size > hostapi.MaxFileSize {
		return tooLarge, fi.Size, nil, nil
	}
	data, err = c.FSRead(path)
	if err != nil {
		return "", 0, nil, err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), int64(len(data)), data, nil
}

func isHash(s string) bool { return len(s) == 64 && strings.Trim(s, "0123456789abcdef") == "" }
