package memory

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	_ "modernc.org/sqlite" // the pure-Go SQLite, registered as "sqlite"

	"github.com/astrid-go/astrid/capsules/memory"
	"github.com/astrid-go/astrid/sdk/sdktest"
)

// engine is one full-text search over the corpus: add indexes note i
// (durably, one at a time, as remember does), search returns the indexes
// of the best five notes for words.
type engine interface {
	add(i int, text string) error
	search(words []string) ([]int, error)
}

// ours is the memory capsule in an in-process kernel (sdktest: the real
// store in a temporary $ASTRID_HOME), through its tools.
type ours struct {
	k     *sdktest.Kernel
	index map[string]int // note text → corpus index (recall answers notes)
}

func newOurs(b testing.TB) engine {
	return &ours{k: sdktest.New(b, sdktest.Capsule{Manifest: memory.Manifest, New: memory.New}), index: map[string]int{}}
}

func (o *ours) add(i int, text string) error {
	o.index[text] = i
	if res := o.k.CallToolAs("alice", "remember", map[string]any{"text": text}); res.IsError {
		return fmt.Errorf("remember note %d: %s", i, res.Content)
	}
	return nil
}

func (o *ours) search(words []string) ([]int, error) {
	res := o.k.CallToolAs("alice", "recall", map[string]any{"query": strings.Join(words, " "), "limit": 5})
	if res.IsError {
		return nil, fmt.Errorf("recall %v: %s", words, res.Content)
	}
	var notes []memory.Note
	if err := json.Unmarshal([]byte(res.Content), &notes); err != nil {
		return nil, fmt.Errorf("recall %v: %w", words, err)
	}
	out := make([]int, 0, len(notes))
	for _, n := range notes {
		out = append(out, o.index[n.Text])
	}
	return out, nil
}

// blevex is bleve's default (scorch) index on disk with its default
// mapping (standard analyzer: Unicode words, lowercased, English stop
// words), queried with a match query (any of the words, BM25-like tf-idf).
type blevex struct{ idx bleve.Index }

func newBleve(b testing.TB) engine {
	idx, err := bleve.New(filepath.Join(b.TempDir(), "notes.bleve"), bleve.NewIndexMapping())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = idx.Close() })
	return &blevex{idx}
}

func (e *blevex) add(i int, text string) error {
	return e.idx.Index(strconv.Itoa(i), map[string]string{"text": text})
}

func (e *blevex) search(words []string) ([]int, error) {
	req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery(strings.Join(words, " ")), 5, 0, false)
	res, err := e.idx.Search(req)
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(res.Hits))
	for _, h := range res.Hits {
		i, _ := strconv.Atoi(h.ID)
		out = append(out, i)
	}
	return out, nil
}

// fts5 is an SQLite FTS5 table in a database file (WAL, synchronous
// NORMAL: durable at each commit's checkpoint, the usual setting for an
// application store), each note its own transaction, ranked by bm25.
type fts5 struct {
	db     *sql.DB
	insert *sql.Stmt
	query  *sql.Stmt
}

func newFTS5(b testing.TB) engine {
	db, err := sql.Open("sqlite", filepath.Join(b.TempDir(), "notes.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	db.SetMaxOpenConns(1)
	for _, s := range []string{"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "CREATE VIRTUAL TABLE notes USING fts5(text)"} {
		if _, err := db.Exec(s); err != nil {
			b.Fatalf("%s: %v", s, err)
		}
	}
	e := &fts5{db: db}
	if e.insert, err = db.Prepare("INSERT INTO notes(rowid, text) VALUES (?, ?)"); err != nil {
		b.Fatal(err)
	}
	if e.query, err = db.Prepare("SELECT rowid FROM notes WHERE notes MATCH ? ORDER BY rank LIMIT 5"); err != nil {
		b.Fatal(err)
	}
	return e
}

func (e *fts5) add(i int, text string) error {
	_, err := e.insert.Exec(i+1, text)
	return err
}

func (e *fts5) search(words []string) ([]int, error) {
	rows, err := e.query.QueryContext(context.Background(), strings.Join(words, " OR "))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var id int
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id-1)
	}
	return out, rows.Err()
}
