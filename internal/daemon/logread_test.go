package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/testutil"
)

// logHome is a home whose daemon log is written by the daemon's own
// rotating writer, records of about 20 bytes, rotated past maxBytes.
type logHome struct {
	t    *testing.T
	home string
	w    *rotatingFile
	next int
}

func newLogHome(t *testing.T, maxBytes int64, keep int) *logHome {
	t.Helper()
	home := t.TempDir()
	w, err := openRotating(PathsOf(home).Log, maxBytes, keep)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return &logHome{t: t, home: home, w: w}
}

// write appends n records, "record 0000" on.
func (h *logHome) write(n int) {
	h.t.Helper()
	for range n {
		if _, err := fmt.Fprintf(h.w, `{"msg":"record %04d"}`+"\n", h.next); err != nil {
			h.t.Fatal(err)
		}
		h.next++
	}
}

// collector gathers records as strings (the reader's buffer is reused).
type collector struct{ got []string }

func (c *collector) add(rec []byte) { c.got = append(c.got, string(rec)) }

func record(i int) string { return fmt.Sprintf(`{"msg":"record %04d"}`, i) }

// want checks that c holds exactly records from..to-1, in order, and resets.
func (c *collector) want(t *testing.T, from, to int) {
	t.Helper()
	var want []string
	for i := from; i < to; i++ {
		want = append(want, record(i))
	}
	if !slices.Equal(c.got, want) {
		t.Fatalf("read %d records %v\nwant %d records %v", len(c.got), c.got, len(want), want)
	}
	c.got = nil
}

func TestLogReaderNoLog(t *testing.T) {
	r := OpenLog(t.TempDir())
	if err := r.Backlog(func([]byte) {}); !errors.Is(err, ErrNoLog) {
		t.Fatalf("Backlog of a home without a log: %v, want ErrNoLog", err)
	}
}

// The backlog is the rotated files, oldest first, then the current one:
// every record still kept, in order.
func TestLogReaderBacklogAcrossRotatedFiles(t *testing.T) {
	h := newLogHome(t, 100, 3) // 4 records a file
	h.write(14)                // files .3, .2, .1 and the current one
	r := OpenLog(h.home)
	defer r.Close()
	var c collector
	if err := r.Backlog(c.add); err != nil {
		t.Fatal(err)
	}
	if len(c.got) == 0 || c.got[len(c.got)-1] != record(13) {
		t.Fatalf("backlog %v does not end with the newest record", c.got)
	}
	first := 14 - len(c.got)
	c.want(t, first, 14)
	if _, err := os.Stat(PathsOf(h.home).Log + ".3"); err != nil {
		t.Fatalf("the test wanted three rotated files: %v", err)
	}
}

// Following reads what is appended after the backlog, exactly once and in
// order: with no rotation, across one, across several between two looks
// (the files rotated away meanwhile are read whole), and while the new file
// does not exist yet.
func TestLogReaderFollowsAcrossRotation(t *testing.T) {
	h := newLogHome(t, 100, 3) // 4 records a file
	h.write(2)
	r := OpenLog(h.home)
	defer r.Close()
	var c collector
	if err := r.Backlog(c.add); err != nil {
		t.Fatal(err)
	}
	c.want(t, 0, 2)

	h.write(1) // no rotation
	if err := r.step(c.add); err != nil {
		t.Fatal(err)
	}
	c.want(t, 2, 3)

	h.write(3) // one rotation: 3 in the old file, 2 in the new
	if err := r.step(c.add); err != nil {
		t.Fatal(err)
	}
	c.want(t, 3, 6)

	h.write(9) // two rotations between looks
	if err := r.step(c.add); err != nil {
		t.Fatal(err)
	}
	c.want(t, 6, 15)

	// Rotated by hand with no new file yet: the reader waits for it.
	log := PathsOf(h.home).Log
	for i := 3; i >= 1; i-- {
		_ = os.Rename(fmt.Sprintf("%s.%d", log, i), fmt.Sprintf("%s.%d", log, i+1))
	}
	if err := os.Rename(log, log+".1"); err != nil {
		t.Fatal(err)
	}
	if err := r.step(c.add); err != nil {
		t.Fatal(err)
	}
	c.want(t, 15, 15)
	f, err := os.OpenFile(log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, record(15))
	f.Close()
	if err := r.step(c.add); err != nil {
		t.Fatal(err)
	}
	c.want(t, 15, 16)
}

// A record written in two pieces (a reader looking mid-write) is passed on
// once, whole.
func TestLogReaderHoldsPartialRecord(t *testing.T) {
	home := t.TempDir()
	log := PathsOf(home).Log
	if err := os.MkdirAll(filepath.Dir(log), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := OpenLog(home)
	defer r.Close()
	var c collector
	if err := r.Backlog(c.add); err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(f, `{"msg":"rec`)
	if err := r.step(c.add); err != nil {
		t.Fatal(err)
	}
	if len(c.got) != 0 {
		t.Fatalf("a partial record was passed on: %v", c.got)
	}
	fmt.Fprint(f, `ord 0000"}`+"\n")
	if err := r.step(c.add); err != nil {
		t.Fatal(err)
	}
	c.want(t, 0, 1)
	// Truncated in place (seen while shorter than what was read): read
	// again from the start.
	if err := f.Truncate(0); err != nil {
		t.Fatal(err)
	}
	if err := r.step(c.add); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, record(1))
	if err := r.step(c.add); err != nil {
		t.Fatal(err)
	}
	c.want(t, 1, 2)
}

// Follow itself: it passes on a record appended while it runs, across a
// rotation by the daemon's writer, and returns when its context ends.
func TestLogReaderFollowUntilCancelled(t *testing.T) {
	h := newLogHome(t, 100, 3)
	r := OpenLog(h.home)
	defer r.Close()
	if err := r.Backlog(func([]byte) {}); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 64)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Follow(ctx, time.Millisecond, func(rec []byte) { got <- string(rec) }) }()
	h.write(6) // rotates once
	for i := range 6 {
		if rec := testutil.WaitForRecv(t, patience, fmt.Sprintf("record %d", i), got); rec != record(i) {
			t.Fatalf("record %d: %q", i, rec)
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Follow returned %v", err)
	}
}
