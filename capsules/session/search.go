package session

import (
	"errors"
	"slices"
	"strings"
	"unicode"

	"github.com/astrid-go/astrid/sdk"
)

// SearchTopic and OpSearch: case-insensitive search of a principal's
// sessions (spec §7.1, v0.2).
const (
	SearchTopic = "session.v1.request.search"
	OpSearch    = "search"
)

// Search bounds: the default and largest number of hits per call, the
// records one call reads, and a snippet's length in runes.
const (
	DefaultSearchLimit = 20
	MaxSearchLimit     = 100
	MaxSearchScan      = 200
	SnippetRunes       = 120
)

// Hit is a session whose text messages contain the query.
type Hit struct {
	SessionID  string `json:"session_id"`
	MatchCount int    `json:"match_count"`
	// Snippet is the first match with the text around it, at most
	// SnippetRunes runes (an ellipsis marks each cut).
	Snippet string `json:"snippet"`
}

// SearchReply answers search. NextCursor, when not empty, continues the
// search after the sessions this call read (it stops after MaxSearchScan
// records or limit hits, so a page may hold fewer hits than asked).
type SearchReply struct {
	CorrelationID string `json:"correlation_id"`
	Hits          []Hit  `json:"hits"`
	NextCursor    string `json:"next_cursor"`
}

type searchRequest struct {
	Query           string `json:"query"`
	Cursor          string `json:"cursor"`
	Limit           int    `json:"limit"`
	IncludeArchived bool   `json:"include_archived"`
}

func handleSearch(c *sdk.Call) error {
	req, topic, ok, err := replyTo(c, OpSearch, c.Payload())
	if !ok {
		return err
	}
	var q searchRequest
	if err := c.Decode(&q); err != nil {
		return fail(c, topic, req.CorrelationID, "session: search: "+err.Error())
	}
	reply, err := searchPage(c, q)
	if err != nil {
		return fail(c, topic, req.CorrelationID, "session: search: "+err.Error())
	}
	reply.CorrelationID = req.CorrelationID
	return c.PublishJSON(topic, reply)
}

// match counts query's non-overlapping occurrences in r's text messages
// (user and assistant text; tool calls and results are not conversation)
// and cuts a snippet around the first. query is already folded.
func match(id string, r Record, query []rune) (Hit, bool) {
	hit := Hit{SessionID: id}
	for _, m := range r.Messages {
		t, ok := m.Text()
		if !ok {
			continue
		}
		text := []rune(t)
		folded := fold(slices.Clone(text))
		for i := 0; i+len(query) <= len(folded); {
			if !slices.Equal(folded[i:i+len(query)], query) {
				i++
				continue
			}
			if hit.MatchCount == 0 {
				hit.Snippet = snippet(text, i, len(query))
			}
			hit.MatchCount++
			i += len(query)
		}
	}
	return hit, hit.MatchCount > 0
}

// fold lower-cases rs in place, rune by rune, so indexes into the folded
// runes are indexes into the original.
func fold(rs []rune) []rune {
	for i, r := range rs {
		rs[i] = unicode.ToLower(r)
	}
	return rs
}

// snippet is text around the match at [at, at+n), at most SnippetRunes
// runes including the ellipses that mark cuts.
func snippet(text []rune, at, n int) string {
	room := SnippetRunes - 2 // an ellipsis each side, at worst
	start := max(0, at-max(0, room-n)/2)
	end := min(len(text), start+room)
	start = max(0, min(start, end-room))
	var b strings.Builder
	if start > 0 {
		b.WriteString("…")
	}
	b.WriteString(strings.Join(strings.Fields(string(text[start:end])), " "))
	if end < len(text) {
		b.WriteString("…")
	}
	return b.String()
}

// searchPage runs one call's worth of a search.
func searchPage(c *sdk.Call, q searchRequest) (SearchReply, error) {
	query := fold([]rune(strings.TrimSpace(q.Query)))
	if len(query) == 0 {
		return SearchReply{}, errors.New("the query is empty")
	}
	limit := q.Limit
	switch {
	case limit <= 0:
		limit = DefaultSearchLimit
	case limit > MaxSearchLimit:
		limit = MaxSearchLimit
	}
	keys, err := c.KVList(keyPrefix)
	if err != nil {
		return SearchReply{}, err
	}
	reply := SearchReply{Hits: []Hit{}}
	scanned, last := 0, ""
	for _, key := range keys {
		id := strings.TrimPrefix(key, keyPrefix)
		if q.Cursor != "" && id <= q.Cursor {
			continue
		}
		if scanned == MaxSearchScan || len(reply.Hits) == limit {
			reply.NextCursor = last
			break
		}
		scanned, last = scanned+1, id
		r, err := load(c, id)
		if err != nil {
			return SearchReply{}, err
		}
		if r.Archived && !q.IncludeArchived {
			continue
		}
		if hit, ok := match(id, r, query); ok {
			reply.Hits = append(reply.Hits, hit)
		}
	}
	return reply, nil
}
