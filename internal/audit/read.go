package audit

import (
	"bufio"
	"container/heap"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/astrid-go/astrid/ipc"
)

// Chains lists the principals with a chain (or only a checkpoint) in dir,
// sorted, the system chain ("") first when it exists.
func Chains(dir string) ([]string, error) {
	seen := map[string]bool{}
	for _, ext := range []string{logExt, ckptExt} {
		if _, err := os.Stat(filepath.Join(dir, systemName+ext)); err == nil {
			seen[""] = true
		}
	}
	ents, err := os.ReadDir(filepath.Join(dir, chainsDir))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("audit: list chains: %w", err)
	}
	for _, e := range ents {
		name := e.Name()
		for _, ext := range []string{logExt, ckptExt} {
			if p, ok := strings.CutSuffix(name, ext); ok && ipc.ValidatePrincipal(p) == nil && e.Type().IsRegular() {
				seen[p] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}

// Scanner reads a chain file line by line without holding it in memory.
type Scanner struct {
	r    *bufio.Reader
	f    *os.File
	line int
	err  error
	rec  Record
}

// OpenScanner opens principal's chain in dir; a missing chain is an
// empty one.
func OpenScanner(dir, principal string) (*Scanner, error) {
	f, err := os.Open(ChainPath(dir, principal))
	if errors.Is(err, os.ErrNotExist) {
		return &Scanner{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	return &Scanner{f: f, r: bufio.NewReaderSize(f, MaxLineBytes+2)}, nil
}

// Next reads the next line; false at the end or on an error (Err).
// A line that does not decode stops the scan with its error.
func (s *Scanner) Next() bool {
	if s.r == nil || s.err != nil {
		return false
	}
	b, err := s.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		s.line++
		s.err = fmt.Errorf("line %d: over %d bytes", s.line, MaxLineBytes)
		return false
	}
	if errors.Is(err, io.EOF) {
		if len(b) == 0 {
			return false
		}
		s.line++
		s.err = fmt.Errorf("line %d: unfinished (no newline): an append cut short, or the file cut mid-entry", s.line)
		return false
	}
	if err != nil {
		s.err = fmt.Errorf("audit: read: %w", err)
		return false
	}
	s.line++
	rec, derr := DecodeLine(b[:len(b)-1])
	if derr != nil {
		s.err = fmt.Errorf("line %d: %w", s.line, derr)
		return false
	}
	s.rec = rec
	return true
}

// Record is the line Next read.
func (s *Scanner) Record() Record { return s.rec }

// Line is the number of the line Next read, from 1.
func (s *Scanner) Line() int { return s.line }

// Err is why the scan stopped early, if it did.
func (s *Scanner) Err() error { return s.err }

// Close closes the file.
func (s *Scanner) Close() error {
	if s.f == nil {
		return nil
	}
	return s.f.Close()
}

// Filter selects entries for Show.
type Filter struct {
	// Principals limits to these chains ("" is the system chain); nil is
	// every chain.
	Principals []string
	Since      time.Time
	// Seals includes the writer's seal entries (KindSeal), left out by
	// default: they record nothing that happened.
	Seals bool
}

// Show calls fn for each entry that passes f, every chain merged in time
// order, reading each chain as a stream.
func Show(dir string, f Filter, fn func(Record) error) error {
	ps := f.Principals
	if ps == nil {
		var err error
		if ps, err = Chains(dir); err != nil {
			return err
		}
	}
	h := &mergeHeap{}
	defer func() {
		for _, s := range h.s {
			s.Close()
		}
	}()
	for _, p := range ps {
		s, err := OpenScanner(dir, p)
		if err != nil {
			return err
		}
		if err := h.advance(s, f.Since, p); err != nil {
			return err
		}
	}
	heap.Init(h)
	for h.Len() > 0 {
		s := h.s[0]
		if r := s.Record(); f.Seals || r.Entry.Kind != KindSeal {
			if err := fn(r); err != nil {
				return err
			}
		}
		if err := h.advance(s, f.Since, s.Record().Entry.Principal); err != nil {
			return err
		}
		if len(h.s) > 0 && h.s[0] == s {
			heap.Fix(h, 0)
		}
	}
	return nil
}

// mergeHeap orders scanners by their current entry's time.
type mergeHeap struct{ s []*Scanner }

// advance moves s to its next entry at or after since; a scanner at its
// end is taken off the heap (if it is on it).
func (h *mergeHeap) advance(s *Scanner, since time.Time, p string) error {
	for s.Next() {
		if !s.rec.Entry.Time.Before(since) {
			if !h.has(s) {
				h.s = append(h.s, s)
			}
			return nil
		}
	}
	if err := s.Err(); err != nil {
		return fmt.Errorf("audit: %s chain %w (run astrid audit verify)", chainLabel(p), err)
	}
	for i, x := range h.s {
		if x == s {
			heap.Remove(h, i)
			break
		}
	}
	return s.Close()
}

func (h *mergeHeap) has(s *Scanner) bool {
	for _, x := range h.s {
		if x == s {
			return true
		}
	}
	return false
}

func (h *mergeHeap) Len() int { return len(h.s) }
func (h *mergeHeap) Less(i, j int) bool {
	a, b := h.s[i].rec.Entry, h.s[j].rec.Entry
	if !a.Time.Equal(b.Time) {
		return a.Time.Before(b.Time)
	}
	return a.Principal < b.Principal
}
func (h *mergeHeap) Swap(i, j int) { h.s[i], h.s[j] = h.s[j], h.s[i] }
func (h *mergeHeap) Push(x any)    { h.s = append(h.s, x.(*Scanner)) }
func (h *mergeHeap) Pop() any {
	x := h.s[len(h.s)-1]
	h.s = h.s[:len(h.s)-1]
	return x
}
