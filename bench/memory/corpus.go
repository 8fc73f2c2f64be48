package memory

import (
	"math/rand/v2"
	"strings"
)

// Corpus sizes: the memory capsule's cap, and queries enough for a p50.
const (
	corpusNotes   = 10_000
	corpusQueries = 200
	vocabulary    = 5_000
)

// syllables make the pseudo-words of the vocabulary: none is an English
// stop word, so every engine's analyzer keeps them all.
var syllables = []string{"ka", "lo", "mi", "ser", "tun", "vel", "dro", "pix", "qua", "ren", "sol", "zan", "bri", "cor", "fen", "gul"}

// words is the vocabulary, most frequent first.
func words() []string {
	seen := map[string]bool{}
	out := make([]string, 0, vocabulary)
	r := rand.New(rand.NewPCG(1, 2))
	for len(out) < vocabulary {
		var b strings.Builder
		for range 2 + r.IntN(3) {
			b.WriteString(syllables[r.IntN(len(syllables))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// corpus is n notes of 12 to 40 words drawn Zipf-distributed from the
// vocabulary (as prose is: a few words in most notes, most in few), and
// queries of three distinct words of a note chosen at random, with the
// index of that note.
func corpus(n, queries int) (notes []string, qs []query) {
	vocab := words()
	r := rand.New(rand.NewPCG(3, 4))
	zipf := rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1))
	notes = make([]string, n)
	for i := range notes {
		ws := make([]string, 12+r.IntN(29))
		for j := range ws {
			ws[j] = vocab[zipf.Uint64()]
		}
		notes[i] = strings.Join(ws, " ") + "."
	}
	for len(qs) < queries {
		i := r.IntN(n)
		ws := strings.Fields(strings.TrimSuffix(notes[i], "."))
		picked := map[string]bool{}
		for len(picked) < 3 && len(picked) < len(ws) {
			picked[ws[r.IntN(len(ws))]] = true
		}
		if len(picked) < 3 {
			continue
		}
		q := query{note: i}
		for w := range picked {
			q.words = append(q.words, w)
		}
		qs = append(qs, q)
	}
	return notes, qs
}

// query is three words of note.
type query struct {
	words []string
	note  int
}
