package memory

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/astrid-go/astrid/sdk"
)

// KV layout.
const (
	notePrefix = "memory.note."
	termPrefix = "memory.t."
)

// maxTermBytes bounds an indexed term (a KV key is at most 1 KiB);
// maxTermsPerNote bounds the index entries one note writes.
const (
	maxTermBytes    = 64
	maxTermsPerNote = 128
)

// stopWords are not indexed: they match almost every note.
var stopWords = map[string]bool{
	"the": true, "and": true, "for": true, "are": true, "but": true, "not": true, "you": true,
	"all": true, "any": true, "can": true, "had": true, "her": true, "was": true, "one": true,
	"our": true, "out": true, "has": true, "his": true, "how": true, "its": true, "who": true,
	"did": true, "yes": true, "she": true, "him": true, "this": true, "that": true, "with": true,
	"have": true, "from": true, "they": true, "will": true, "what": true, "when": true, "your": true,
	"about": true, "there": true, "their": true, "which": true, "would": true, "into": true,
	"is": true, "it": true, "in": true, "of": true, "to": true, "on": true, "at": true, "be": true,
	"an": true, "as": true, "by": true, "or": true, "do": true, "if": true, "my": true, "me": true,
	"we": true, "so": true, "no": true, "up": true, "i": true, "a": true,
}

// terms is text's indexable words with their counts: lowercased runs of
// letters and digits, stop words and one-letter words left out.
func terms(text string) map[string]int {
	out := map[string]int{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len(w) < 2 || len(w) > maxTermBytes || stopWords[w] {
			continue
		}
		if _, seen := out[w]; !seen && len(out) == maxTermsPerNote {
			continue
		}
		out[w]++
	}
	return out
}

// postingKey is note id's posting of term, which occurs n times in it: the
// count is in the key, so a query reads a term's postings with one list.
func postingKey(term, id string, n int) string {
	return termPrefix + term + "." + id + "." + strconv.Itoa(n)
}

// index writes the postings of note id.
func index(c *sdk.Call, id, text string) error {
	for t, n := range terms(text) {
		if err := c.KVSet(postingKey(t, id, n), []byte{'1'}); err != nil {
			return err
		}
	}
	return nil
}

// unindex removes the postings of note id. A posting left behind (a
// failed delete) finds no note and is skipped by recall.
func unindex(c *sdk.Call, id, text string) {
	for t, n := range terms(text) {
		_ = c.KVDelete(postingKey(t, id, n))
	}
}

// hit is a note's score for a query.
type hit struct {
	id    string
	score float64
}

// search ranks the notes for query: each query term adds idf·tf/(tf+1)
// to the notes holding it, idf = ln(1 + N/df). At most limit hits, best
// first, ties by id.
func search(c *sdk.Call, query string, limit int) ([]hit, error) {
	q := terms(query)
	if len(q) == 0 {
		return nil, nil
	}
	ids, err := noteIDs(c)
	if err != nil {
		return nil, err
	}
	total := float64(len(ids))
	if total == 0 {
		return nil, nil
	}
	scores := map[string]float64{}
	for t := range q {
		keys, err := c.KVList(termPrefix + t + ".")
		if err != nil {
			return nil, err
		}
		if len(keys) == 0 {
			continue
		}
		idf := math.Log(1 + total/float64(len(keys)))
		for _, k := range keys {
			id, count, _ := strings.Cut(strings.TrimPrefix(k, termPrefix+t+"."), ".")
			tf := 1.0
			if n, err := strconv.Atoi(count); err == nil && n > 0 {
				tf = float64(n)
			}
			scores[id] += idf * tf / (tf + 1)
		}
	}
	hits := make([]hit, 0, len(scores))
	for id, s := range scores {
		hits = append(hits, hit{id, s})
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].id < hits[j].id
	})
	if len(hits) > limit {
		hits = hits[:limit]
	}
	return hits, nil
}
