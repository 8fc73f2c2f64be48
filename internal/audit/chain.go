package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// File layout under the audit directory ($ASTRID_HOME/audit):
//
//	system.log, system.ckpt            the system chain and its checkpoint
//	chains/<principal>.log, .ckpt      each principal's
const (
	systemName = "system"
	chainsDir  = "chains"
	logExt     = ".log"
	ckptExt    = ".ckpt"
)

// ChainPath is the file holding principal's chain ("" is the system chain).
func ChainPath(dir, principal string) string {
	if principal == "" {
		return filepath.Join(dir, systemName+logExt)
	}
	return filepath.Join(dir, chainsDir, principal+logExt)
}

// CheckpointPath is the file holding principal's latest signed checkpoint.
func CheckpointPath(dir, principal string) string {
	if principal == "" {
		return filepath.Join(dir, systemName+ckptExt)
	}
	return filepath.Join(dir, chainsDir, principal+ckptExt)
}

// chainLabel names a chain for people.
func chainLabel(principal string) string {
	if principal == "" {
		return "system"
	}
	return "principal " + principal
}

// chain is one open chain file and what this process knows of its tail.
type chain struct {
	principal string
	path      string
	f         *os.File
	size      int64 // the file's size after what this process last read or wrote
	known     bool  // seq, hash and last reflect the file at size
	seq       uint64
	hash      string
	last      time.Time
	// lastSigned: the entry at seq is a signed one (a seal, or an entry
	// of the format that signed each).
	lastSigned bool

	held   bool       // this process holds the file's flock (from a write to the next seal)
	mu     sync.Mutex // held while writing; guards the fields above and queued, buf, held
	queued []Entry    // enqueued, not yet written
	buf    []byte

	syncMu    sync.Mutex
	syncedSeq uint64 // entries up to this seq are fdatasynced

	// adoptTo is the last of entries another writer left unsealed, which
	// the next seal here vouches for (0: none); guarded by mu.
	adoptTo uint64

	// The sealer's own.
	ckptSeq uint64 // the seq the latest checkpoint written by us names
	ckptAt  time.Time
}

func openChain(dir, principal string) (*chain, error) {
	path := ChainPath(dir, principal)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit: open %s chain: %w", chainLabel(principal), err)
	}
	return &chain{principal: principal, path: path, f: f}, nil
}

// lock takes the chain file's flock, so two processes appending to one
// chain take turns, and brings this process's view of the tail up to date.
func (c *chain) lock() error {
	if err := unix.Flock(int(c.f.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("audit: lock %s: %w", c.path, err)
	}
	st, err := c.f.Stat()
	if err != nil {
		c.unlock()
		return fmt.Errorf("audit: stat %s: %w", c.path, err)
	}
	if c.known && st.Size() == c.size {
		return nil
	}
	if err := c.readTail(st.Size()); err != nil {
		c.unlock()
		return err
	}
	// Another writer left entries it never sealed (it was killed: a
	// writer holds the lock until its seal). This one's next seal will
	// vouch for them, and says so.
	if !c.lastSigned && c.seq > 0 {
		c.adoptTo = c.seq
	}
	return nil
}

func (c *chain) unlock() { _ = unix.Flock(int(c.f.Fd()), unix.LOCK_UN) }

// readTail reads the last entry of a file of size bytes. A last line
// without its newline is an append a crash cut short, never acknowledged:
// it is cut off (and logged) so the chain goes on from the entry before.
func (c *chain) readTail(size int64) error {
	c.known = false
	if size == 0 {
		c.seq, c.hash, c.last, c.size, c.known, c.lastSigned = 0, Genesis, time.Time{}, 0, true, true
		return nil
	}
	n := min(size, int64(2*MaxLineBytes))
	buf := make([]byte, n)
	if _, err := c.f.ReadAt(buf, size-n); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("audit: read tail of %s: %w", c.path, err)
	}
	if buf[len(buf)-1] != '\n' {
		cut := bytes.LastIndexByte(buf, '\n') + 1 // 0 when no whole line is left in the window
		newSize := size - n + int64(cut)
		if cut == 0 && size > n {
			return fmt.Errorf("audit: %s ends in a line over %d bytes", c.path, MaxLineBytes)
		}
		slog.Warn("audit: cutting an unfinished last line (an append a crash interrupted)", "chain", c.path, "bytes", size-newSize)
		if err := c.f.Truncate(newSize); err != nil {
			return fmt.Errorf("audit: cut unfinished line of %s: %w", c.path, err)
		}
		return c.readTail(newSize)
	}
	body := buf[:len(buf)-1]
	start := bytes.LastIndexByte(body, '\n') + 1
	if start == 0 && size > n {
		return fmt.Errorf("audit: %s ends in a line over %d bytes", c.path, MaxLineBytes)
	}
	r, err := DecodeLine(body[start:])
	if err != nil {
		return fmt.Errorf("audit: the last entry of %s does not decode (run astrid audit verify): %w", c.path, err)
	}
	c.seq, c.hash, c.last, c.size, c.known, c.lastSigned = r.Entry.Seq, r.Hash, r.Entry.Time, size, true, r.Sig != nil
	return nil
}

func (c *chain) close() error { return c.f.Close() }
