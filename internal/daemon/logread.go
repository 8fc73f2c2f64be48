package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// maxRotated bounds how many rotated files a reader looks for (path.1 …);
// a daemon keeps DefaultLogKeep unless told otherwise.
const maxRotated = 100

// maxRecord bounds one record a reader holds while waiting for its newline:
// a longer run without one is passed on in pieces, never held without end.
const maxRecord = 1 << 20

// ErrNoLog is returned by LogReader.Backlog when the home has no daemon log.
var ErrNoLog = errors.New("no daemon log")

// LogReader reads the daemon's JSON log (logs/daemon.log and its rotated
// files, see logfile.go) as whole records, one line each: what is there,
// oldest first, then what is appended, following the file across rotation.
// It never writes or removes anything.
type LogReader struct {
	path    string
	f       *os.File // the current file, read up to its end so far
	partial []byte   // the start of a record whose newline has not come
}

// OpenLog returns a reader of the daemon log of home.
func OpenLog(home string) *LogReader {
	return &LogReader{path: PathsOf(home).Log}
}

// Path is the current log file's path.
func (r *LogReader) Path() string { return r.path }

// Close releases the open file.
func (r *LogReader) Close() error {
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}

// Backlog calls fn for every record in the rotated files and the current
// one, oldest first, and leaves the reader at the current file's end for
// Follow. It returns ErrNoLog when neither the current file nor a rotated
// one exists.
func (r *LogReader) Backlog(fn func(record []byte)) error {
	n := 0
	for n < maxRotated {
		if _, err := os.Stat(r.rotated(n + 1)); err != nil {
			break
		}
		n++
	}
	for i := n; i >= 1; i-- {
		if err := r.readWhole(r.rotated(i), fn); err != nil {
			return err
		}
	}
	f, err := os.Open(r.path)
	if errors.Is(err, fs.ErrNotExist) {
		if n == 0 {
			return fmt.Errorf("%w at %s", ErrNoLog, r.path)
		}
		return nil // between a rotation's rename and the new file: Follow finds it
	}
	if err != nil {
		return fmt.Errorf("daemon log: %w", err)
	}
	r.f = f
	return r.drain(fn)
}

// Follow calls fn for every record appended after what Backlog read (or,
// without Backlog, after the end the current file has now), looking every
// poll, until ctx ends; a rotation is followed into the new file, and the
// records written to the old one before it were read first, as were those
// of any file rotated away between two looks. It returns ctx's error.
func (r *LogReader) Follow(ctx context.Context, poll time.Duration, fn func(record []byte)) error {
	if r.f == nil {
		if f, err := os.Open(r.path); err == nil {
			if _, err := f.Seek(0, io.SeekEnd); err != nil {
				f.Close()
				return fmt.Errorf("daemon log: %w", err)
			}
			r.f = f
		}
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		if err := r.step(fn); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// step reads what was appended and, if the current file was rotated away,
// moves on to its successors.
func (r *LogReader) step(fn func(record []byte)) error {
	if r.f == nil {
		f, err := os.Open(r.path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // no log yet, or mid-rotation
		}
		if err != nil {
			return fmt.Errorf("daemon log: %w", err)
		}
		r.f = f
	}
	if err := r.drain(fn); err != nil {
		return err
	}
	cur, err := os.Stat(r.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("daemon log: %w", err)
	}
	mine, err := r.f.Stat()
	if err != nil {
		return fmt.Errorf("daemon log: %w", err)
	}
	if cur != nil && os.SameFile(cur, mine) {
		if pos, err := r.f.Seek(0, io.SeekCurrent); err == nil && cur.Size() < pos {
			// Truncated in place (by hand): read it again from the start.
			if _, err := r.f.Seek(0, io.SeekStart); err != nil {
				return fmt.Errorf("daemon log: %w", err)
			}
			r.partial = r.partial[:0]
		}
		return nil
	}
	// Rotated: the writer closed our file before renaming it, so what
	// drain read is all it has. Files rotated after it and before the
	// current one (several rotations between two looks) are read whole.
	at := 0
	for i := 1; i <= maxRotated; i++ {
		fi, err := os.Stat(r.rotated(i))
		if err != nil {
			break
		}
		if os.SameFile(fi, mine) {
			at = i
			break
		}
	}
	r.f.Close()
	r.f = nil
	r.flushPartial(fn)
	for i := at - 1; i >= 1; i-- {
		if err := r.readWhole(r.rotated(i), fn); err != nil {
			return err
		}
	}
	if cur == nil {
		return nil // the new file is not there yet: the next look opens it
	}
	f, err := os.Open(r.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("daemon log: %w", err)
	}
	r.f = f
	return r.drain(fn)
}

// drain reads r.f to its end, passing on each complete record.
func (r *LogReader) drain(fn func(record []byte)) error {
	buf := make([]byte, 64<<10)
	for {
		n, err := r.f.Read(buf)
		if n > 0 {
			r.split(buf[:n], fn)
		}
		if errors.Is(err, io.EOF) || (err == nil && n == 0) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("daemon log: %w", err)
		}
	}
}

// split passes on every complete line of r.partial+p and keeps the rest.
func (r *LogReader) split(p []byte, fn func(record []byte)) {
	r.partial = append(r.partial, p...)
	for {
		i := bytes.IndexByte(r.partial, '\n')
		if i < 0 {
			break
		}
		if i > 0 {
			fn(r.partial[:i])
		}
		r.partial = r.partial[i+1:]
	}
	if len(r.partial) > maxRecord {
		r.flushPartial(fn)
	}
	// Keep the buffer from growing by its consumed prefix.
	r.partial = append([]byte(nil), r.partial...)
}

// flushPartial passes on an unterminated record (the end of a file that
// will get no more).
func (r *LogReader) flushPartial(fn func(record []byte)) {
	if len(r.partial) > 0 {
		fn(r.partial)
	}
	r.partial = r.partial[:0]
}

// readWhole passes on every record of the file at path (a rotated one,
// which is never written again); a file gone meanwhile is skipped.
func (r *LogReader) readWhole(path string, fn func(record []byte)) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("daemon log: %w", err)
	}
	for line := range bytes.SplitSeq(data, []byte{'\n'}) {
		if len(line) > 0 {
			fn(line)
		}
	}
	return nil
}

func (r *LogReader) rotated(i int) string { return fmt.Sprintf("%s.%d", r.path, i) }
