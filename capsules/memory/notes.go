package memory

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/astrid-go/astrid/sdk"
)

// Bounds of one principal's memory: a note's text, and how many notes.
const (
	MaxNoteBytes = 8 << 10
	MaxNotes     = 10_000
)

// Note is one saved note.
type Note struct {
	ID      string    `json:"id"`
	Text    string    `json:"text"`
	Created time.Time `json:"created"`
}

func noteKey(id string) string { return notePrefix + id }

// noteIDs is the principal's note ids, in creation order (ids are the
// creation time in base 36, fixed width).
func noteIDs(c *sdk.Call) ([]string, error) {
	keys, err := c.KVList(notePrefix)
	if err != nil {
		return nil, fmt.Errorf("list notes: %w", err)
	}
	for i, k := range keys {
		keys[i] = strings.TrimPrefix(k, notePrefix)
	}
	return keys, nil
}

func loadNote(c *sdk.Call, id string) (Note, bool, error) {
	raw, ok, err := c.KVGet(noteKey(id))
	if err != nil || !ok {
		return Note{}, false, err
	}
	var n Note
	if err := json.Unmarshal(raw, &n); err != nil {
		return Note{}, false, fmt.Errorf("note %s is not readable: %w", id, err)
	}
	return n, true, nil
}

// saveNote stores text as a new note and indexes it.
func saveNote(c *sdk.Call, text string) (Note, error) {
	text = strings.TrimSpace(text)
	switch {
	case text == "":
		return Note{}, fmt.Errorf("the note is empty")
	case len(text) > MaxNoteBytes:
		return Note{}, fmt.Errorf("the note is %d bytes, over the %d-byte limit of one note: save a summary", len(text), MaxNoteBytes)
	}
	ids, err := noteIDs(c)
	if err != nil {
		return Note{}, err
	}
	if len(ids) >= MaxNotes {
		return Note{}, fmt.Errorf("%d notes are saved, the limit: forget some first (recall finds them)", len(ids))
	}
	now := c.Now()
	n := Note{Text: text, Created: now.UTC()}
	// The id is the creation time; two notes in one nanosecond take the
	// next free one.
	for ns := now.UnixNano(); ; ns++ {
		n.ID = fmt.Sprintf("%013s", strconv.FormatInt(ns, 36))
		if _, taken, err := c.KVGet(noteKey(n.ID)); err != nil {
			return Note{}, err
		} else if !taken {
			break
		}
	}
	raw, err := json.Marshal(n)
	if err != nil {
		return Note{}, err
	}
	if err := c.KVSet(noteKey(n.ID), raw); err != nil {
		return Note{}, fmt.Errorf("save the note: %w", err)
	}
	return n, index(c, n.ID, n.Text)
}

// deleteNote forgets note id, reporting whether there was one.
func deleteNote(c *sdk.Call, id string) (bool, error) {
	n, ok, err := loadNote(c, id)
	if err != nil || !ok {
		return false, err
	}
	if err := c.KVDelete(noteKey(id)); err != nil {
		return false, fmt.Errorf("delete the note: %w", err)
	}
	unindex(c, id, n.Text)
	return true, nil
}

// recall is the notes best matching query, at most limit.
func recall(c *sdk.Call, query string, limit int) ([]Note, error) {
	hits, err := search(c, query, limit)
	if err != nil {
		return nil, err
	}
	out := make([]Note, 0, len(hits))
	for _, h := range hits {
		n, ok, err := loadNote(c, h.id)
		if err != nil {
			return nil, err
		}
		if ok { // a posting left by a delete that failed
			out = append(out, n)
		}
	}
	return out, nil
}
