package audit

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Options configure a Log.
type Options struct {
	// Dir is the audit directory ($ASTRID_HOME/audit).
	Dir string
	// Key is the host's signing key (internal/hostkey.Load).
	Key ed25519.PrivateKey
	// Now is the clock; nil is time.Now. Tests set it back to check that
	// a chain's times never go backwards.
	Now func() time.Time
	// SealEvery is how long an entry may stay written but unsigned and
	// not fsynced: a chain with new entries gets a signed seal entry and
	// an fdatasync this long after its first unsealed one. Zero is
	// DefaultSealEvery.
	SealEvery time.Duration
	// CheckpointEvery is how often a chain that was sealed gets a new
	// checkpoint file (written whole: write, fsync, rename); zero is one
	// second.
	CheckpointEvery time.Duration
	// NoSync skips the fdatasync of each seal: entries then survive the
	// process (kill -9) but not a power cut. For benchmarks only.
	NoSync bool
}

// AdoptedThrough is the detail of a seal vouching for entries another
// writer left unsealed (it was killed): the last of them. Verify reports
// them as sealed by a later writer.
const AdoptedThrough = "adopted_through"

// DefaultSealEvery bounds the unsigned window (docs/rationale/audit.md).
const DefaultSealEvery = 10 * time.Millisecond

// maxQueued bounds how many queued entries a chain keeps in memory before
// an Enqueue writes them itself.
const maxQueued = 1024

// ErrClosed reports an append to a closed Log.
var ErrClosed = errors.New("audit: log closed")

// Log appends entries to the chains of one audit directory. It is safe
// for concurrent use. An append writes its entry, hash-linked to the one
// before, with one write(2) in the caller's goroutine; a sealer goroutine
// signs and fsyncs each chain's new entries a batch at a time (group
// commit), SealEvery after the first of them.
type Log struct {
	opts Options

	mu     sync.RWMutex // held for reading by appenders, for writing by Close
	closed bool

	chainsMu sync.Mutex
	chains   map[string]*chain

	wake  chan struct{} // a chain has something to seal
	quit  chan struct{}
	done  chan struct{}
	syncs atomic.Int64 // fdatasyncs made
}

// Open starts a Log on opts.Dir. Chain files are opened as entries for
// them arrive.
func Open(opts Options) (*Log, error) {
	if opts.Dir == "" {
		return nil, errors.New("audit: no directory")
	}
	if len(opts.Key) != ed25519.PrivateKeySize {
		return nil, errors.New("audit: no signing key")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.SealEvery <= 0 {
		opts.SealEvery = DefaultSealEvery
	}
	if opts.CheckpointEvery <= 0 {
		opts.CheckpointEvery = time.Second
	}
	l := &Log{
		opts: opts, chains: map[string]*chain{},
		wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}),
	}
	go l.run()
	return l, nil
}

// PublicKey is the key entries are signed with.
func (l *Log) PublicKey() ed25519.PublicKey { return l.opts.Key.Public().(ed25519.PublicKey) }

// Append writes e to its principal's chain, after any entry queued for
// it, and returns once it is in the file (it survives the process being
// killed), or with why not. It is signed (by the seal covering it) and
// fsynced within SealEvery. A nil Log records nothing.
func (l *Log) Append(ctx context.Context, e Entry) error {
	return l.appendEntry(ctx, e, false)
}

// AppendDurable is Append that also seals the chain and waits for the
// disk: for events rare enough to afford it (an approval's answer, a
// grant), which then survive a power cut as well.
func (l *Log) AppendDurable(ctx context.Context, e Entry) error {
	return l.appendEntry(ctx, e, true)
}

func (l *Log) appendEntry(ctx context.Context, e Entry, durable bool) error {
	if l == nil {
		return nil
	}
	if err := e.check(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("audit: %s: %w", e.Kind, err)
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return ErrClosed
	}
	c, err := l.chainFor(e.Principal)
	if err != nil {
		return err
	}
	c.mu.Lock()
	err = l.write(c, &e, durable)
	var seal uint64
	if err == nil && durable {
		seal = c.seq
	}
	c.mu.Unlock()
	if err != nil {
		return err
	}
	l.poke() // durable or not, the sealer owes the chain a checkpoint
	if durable {
		return l.syncUpTo(c, seal)
	}
	return nil
}

// Enqueue adds e to its chain without waiting: it is written with the
// next Append to the same chain, which follows it in the file, or by the
// sealer within SealEvery. A kill -9 may lose it until then. A failure to
// write it is logged. A nil Log records nothing.
func (l *Log) Enqueue(e Entry) error {
	if l == nil {
		return nil
	}
	if err := e.check(); err != nil {
		return err
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return ErrClosed
	}
	c, err := l.chainFor(e.Principal)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.queued = append(c.queued, e)
	if len(c.queued) >= maxQueued {
		if err := l.write(c, nil, false); err != nil {
			slog.Error("audit: queued entries were not recorded", "chain", c.path, "err", err)
		}
	}
	c.mu.Unlock()
	l.poke()
	return nil
}

// poke tells the sealer there is something to seal.
func (l *Log) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// chainFor returns principal's open chain, opening it on first use.
func (l *Log) chainFor(principal string) (*chain, error) {
	l.chainsMu.Lock()
	defer l.chainsMu.Unlock()
	if c, ok := l.chains[principal]; ok {
		return c, nil
	}
	c, err := openChain(l.opts.Dir, principal)
	if err != nil {
		return nil, err
	}
	l.chains[principal] = c
	return c, nil
}

// write appends c's queued entries, then e (if any), then, with seal, a
// signed seal entry vouching for them all (unless the tail is already
// signed), in one write(2) under the chain file's flock. c.mu is held.
func (l *Log) write(c *chain, e *Entry, seal bool) error {
	queued := c.queued
	c.queued = c.queued[:0]
	if e == nil && len(queued) == 0 && (!seal || c.lastSigned) {
		return nil
	}
	fail := func(err error) error {
		for _, q := range queued {
			slog.Error("audit: an entry was not recorded", "kind", q.Kind, "chain", c.path, "err", err)
		}
		return err
	}
	// The chain file's flock is taken by the first write after a seal and
	// kept until the next seal (at most SealEvery), so a burst of appends
	// costs one write(2) each, and another process appending to the same
	// chain waits at most that long.
	if !c.held {
		if err := c.lock(); err != nil {
			return fail(err)
		}
		c.held = true
	}
	release := seal
	defer func() {
		if release {
			c.unlock()
			c.held = false
		}
	}()
	if e == nil && len(queued) == 0 && c.lastSigned {
		return nil // another writer sealed the tail meanwhile
	}
	now := l.opts.Now().UTC()
	if now.Before(c.last) {
		now = c.last // a clock set back: times within a chain never go back
	}
	seq, hash := c.seq, c.hash
	buf := c.buf[:0]
	add := func(x Entry, sign bool) error {
		seq++
		x.Seq, x.Time, x.Prev = seq, now, hash
		mark := len(buf)
		buf = append(buf, `{"entry":`...)
		at := len(buf)
		var err error
		if buf, err = appendBody(buf, &x); err != nil {
			buf = buf[:mark]
			return fmt.Errorf("audit: encode %s: %w", x.Kind, err)
		}
		body := buf[at:]
		hash = HashBody(body)
		if sign {
			sig := ed25519.Sign(l.opts.Key, append([]byte(entryContext), body...))
			buf = append(buf, `,"sig":"`...)
			buf = base64.StdEncoding.AppendEncode(buf, sig)
			buf = append(buf, '"')
		}
		buf = append(buf, "}\n"...)
		return nil
	}
	for _, q := range queued {
		if err := add(q, false); err != nil {
			release = true
			return fail(err)
		}
	}
	if e != nil {
		if err := add(*e, false); err != nil {
			release = true
			return fail(err)
		}
	}
	if seal {
		se := Entry{Principal: c.principal, Kind: KindSeal}
		if c.adoptTo > 0 {
			se.Detail = map[string]string{AdoptedThrough: strconv.FormatUint(c.adoptTo, 10)}
		}
		if err := add(se, true); err != nil {
			release = true
			return fail(err)
		}
	}
	if _, err := c.f.Write(buf); err != nil {
		c.known, release = false, true
		return fail(fmt.Errorf("audit: append to %s: %w", c.path, err))
	}
	c.buf = buf[:0]
	if cap(c.buf) > 64<<10 {
		c.buf = nil
	}
	c.seq, c.hash, c.last, c.size, c.lastSigned = seq, hash, now, c.size+int64(len(buf)), seal
	if seal {
		c.adoptTo = 0
	}
	return nil
}

// syncUpTo makes c durable at least up to entry seq: an fdatasync, unless
// one that started after seq was written has already returned.
func (l *Log) syncUpTo(c *chain, seq uint64) error {
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	if c.syncedSeq >= seq {
		return nil
	}
	if !l.opts.NoSync {
		if err := unix.Fdatasync(int(c.f.Fd())); err != nil {
			return fmt.Errorf("audit: sync %s: %w", c.path, err)
		}
		l.syncs.Add(1)
	}
	c.syncedSeq = seq
	return nil
}

// Close seals and syncs what was appended, checkpoints every chain and
// closes the files.
func (l *Log) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		<-l.done
		return nil
	}
	l.closed = true
	close(l.quit)
	l.mu.Unlock()
	<-l.done
	var errs []error
	for _, c := range l.chains {
		errs = append(errs, c.close())
	}
	return errors.Join(errs...)
}

// run is the sealer: SealEvery after something was appended it seals
// every chain with unsigned entries, and writes the checkpoints due.
func (l *Log) run() {
	defer close(l.done)
	seal := time.NewTimer(time.Hour)
	seal.Stop()
	ckpt := time.NewTimer(time.Hour)
	ckpt.Stop()
	var owed time.Time // when the earliest checkpoint owed is due (zero: none)
	for {
		var ckptC <-chan time.Time
		if !owed.IsZero() {
			ckpt.Reset(max(owed.Sub(l.opts.Now()), 0))
			ckptC = ckpt.C
		}
		select {
		case <-l.quit:
			ckpt.Stop()
			l.sealAll(true)
			return
		case <-ckptC:
		case <-l.wake:
			ckpt.Stop()
			seal.Reset(l.opts.SealEvery)
			select {
			case <-l.quit:
				seal.Stop()
				l.sealAll(true)
				return
			case <-seal.C:
			}
		}
		owed = l.sealAll(false)
	}
}

// sealAll seals every chain with unsigned entries and writes the
// checkpoints due (with final, every one owed). It returns when the
// earliest checkpoint still owed is due (zero: none).
func (l *Log) sealAll(final bool) time.Time {
	l.chainsMu.Lock()
	cs := make([]*chain, 0, len(l.chains))
	for _, c := range l.chains {
		cs = append(cs, c)
	}
	l.chainsMu.Unlock()
	var owed time.Time
	for _, c := range cs {
		if due := l.sealChain(c, final); !due.IsZero() && (owed.IsZero() || due.Before(owed)) {
			owed = due
		}
	}
	return owed
}

// sealChain seals c's unsigned tail, syncs it and, when due (or final),
// writes its checkpoint file. It returns when a checkpoint still owed is
// due (zero: none).
func (l *Log) sealChain(c *chain, final bool) time.Time {
	c.mu.Lock()
	err := l.write(c, nil, true)
	seq, hash, signed := c.seq, c.hash, c.lastSigned && c.known
	c.mu.Unlock()
	if err != nil {
		slog.Error("audit: seal", "chain", c.path, "err", err)
		return time.Time{}
	}
	if !signed || seq == 0 || seq == c.ckptSeq {
		return time.Time{}
	}
	if err := l.syncUpTo(c, seq); err != nil {
		slog.Error("audit: seal", "err", err)
		return time.Time{}
	}
	now := l.opts.Now().UTC()
	if due := c.ckptAt.Add(l.opts.CheckpointEvery); !final && now.Before(due) {
		return due
	}
	if err := writeCheckpoint(l.opts.Dir, l.opts.Key, c.principal, seq, hash, now); err != nil {
		slog.Error("audit: checkpoint", "err", err)
		return time.Time{}
	}
	c.ckptSeq, c.ckptAt = seq, now
	return time.Time{}
}

// AppendOnce appends e to the chains of dir with a Log of its own, signed
// with key, and closes it (which seals and syncs it): for a command that
// records one event (an install, a removal) without a kernel.
func AppendOnce(ctx context.Context, dir string, key ed25519.PrivateKey, e Entry) error {
	l, err := Open(Options{Dir: dir, Key: key})
	if err != nil {
		return err
	}
	err = l.Append(ctx, e)
	return errors.Join(err, l.Close())
}
