package daemonclient

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/astrid-go/astrid/internal/uplinkwire"
)

// The connection has no reader goroutine of its own. Whoever waits for a
// frame (a request for its answer, a subscription's Recv for an event)
// reads the socket itself when no one else does, handing on what is not
// its own (answers to their requests, events to their subscriptions), and
// stops once its own has come; a waiter that finds someone reading parks
// until its frame is handed to it or the reading is handed on (turn). So
// the common case, one caller waiting for one answer, is woken by the
// socket directly instead of by a reader goroutine that read for it: one
// goroutine hand-off less per frame (see docs/rationale/daemon.md).
//
// When no one has read for idleWait, an idle reader takes over, so the
// subscriptions' buffers keep filling (the daemon drops a client that
// does not read) and the daemon's going away is seen; it lets go as soon
// as a waiter comes (kick), which costs that waiter the hand-off the
// reader goroutine used to cost every frame.

// idleWait is how long the socket may go unread before the idle reader
// reads it.
const idleWait = 10 * time.Millisecond

// errNoAnswer is a wait that reached its deadline.
var errNoAnswer = errors.New("no answer in time")

// waitFor waits until ready holds, reading the socket itself while no one
// else does. signal is sent on when another reader made ready hold;
// deadline (zero: none) and ctx bound the wait: errNoAnswer, ctx.Err(),
// or the connection's end (Err) once ready does not hold.
func (c *Client) waitFor(ctx context.Context, deadline time.Time, ready func() bool, signal <-chan struct{}) error {
	var expired <-chan time.Time
	for {
		if ready() {
			return nil
		}
		c.mu.Lock()
		if c.ended {
			err := c.err
			c.mu.Unlock()
			return err
		}
		if !c.reading {
			c.reading = true
			c.mu.Unlock()
			err := c.readUntil(ctx, deadline, ready)
			c.mu.Lock()
			c.releaseLocked()
			c.mu.Unlock()
			if err != nil {
				return err
			}
			continue
		}
		if c.idleReading {
			c.kickLocked() // the idle reader lets go to a waiter
		}
		c.waiters++
		c.mu.Unlock()
		if expired == nil && !deadline.IsZero() {
			t := time.NewTimer(time.Until(deadline))
			defer t.Stop()
			expired = t.C
		}
		var err error
		select {
		case <-signal:
		case <-c.turn:
		case <-c.done:
		case <-ctx.Done():
			err = ctx.Err()
		case <-expired:
			err = errNoAnswer
		}
		c.mu.Lock()
		c.waiters--
		if !c.reading {
			// A turn this waiter took goes on to the others (this one
			// takes the role again below if it still needs it).
			c.releaseLocked()
		}
		c.mu.Unlock()
		if err != nil && !ready() {
			return err
		}
	}
}

// readUntil reads and hands on frames until ready holds, the deadline
// passes, ctx ends or the connection does. The caller holds the read role.
func (c *Client) readUntil(ctx context.Context, deadline time.Time, ready func() bool) error {
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, c.kick)
		defer stop()
	}
	for {
		c.mu.Lock()
		if c.ended {
			err := c.err
			c.mu.Unlock()
			return err
		}
		c.kicked = false
		_ = c.conn.SetReadDeadline(deadline)
		c.mu.Unlock()
		if err := ctx.Err(); err != nil {
			return err
		}
		body, err := c.rd.next()
		switch {
		case err == nil:
			c.handOn(body)
			if ready() {
				return nil
			}
		case errors.Is(err, os.ErrDeadlineExceeded):
			// Kicked (ctx ended, or a kick meant for another reader),
			// or the deadline passed.
			if err := ctx.Err(); err != nil {
				return err
			}
			if !deadline.IsZero() && !time.Now().Before(deadline) {
				return errNoAnswer
			}
		default:
			c.end(err)
			return c.Err()
		}
	}
}

// readIdle is the idle reader (run by c.idle): it reads while no one
// waits, and lets go when someone does.
func (c *Client) readIdle() {
	c.mu.Lock()
	if c.reading || c.ended || c.waiters > 0 {
		c.mu.Unlock()
		return
	}
	c.reading, c.idleReading = true, true
	defer func() {
		c.mu.Lock()
		c.idleReading = false
		c.releaseLocked()
		c.mu.Unlock()
	}()
	for {
		if c.waiters > 0 || c.ended {
			c.mu.Unlock()
			return
		}
		c.kicked = false
		_ = c.conn.SetReadDeadline(time.Time{})
		c.mu.Unlock()
		body, err := c.rd.next()
		switch {
		case err == nil:
			c.handOn(body)
		case errors.Is(err, os.ErrDeadlineExceeded):
		default:
			c.end(err)
		}
		c.mu.Lock()
	}
}

// releaseLocked gives up the read role: to a waiter if there is one, else
// to the idle reader after idleWait. c.mu must be held.
func (c *Client) releaseLocked() {
	c.reading = false
	if c.ended {
		return
	}
	if c.waiters > 0 {
		select {
		case c.turn <- struct{}{}:
		default:
		}
		return
	}
	if c.closing {
		// Close found the role held: a read now sees the closed socket
		// and ends the connection, which Close waits for.
		c.idle.Reset(0)
		return
	}
	c.idle.Reset(idleWait)
}

// kick wakes the goroutine reading the socket, so it looks again at why it
// reads (its ctx ended, or a waiter came to the idle reader).
func (c *Client) kick() {
	c.mu.Lock()
	c.kickLocked()
	c.mu.Unlock()
}

// kickLocked is kick with c.mu held.
func (c *Client) kickLocked() {
	if c.reading && !c.kicked {
		c.kicked = true
		_ = c.conn.SetReadDeadline(time.Unix(1, 0))
	}
}

// end ends the connection once: every wait ends with ErrDisconnected.
func (c *Client) end(cause error) {
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return
	}
	c.ended = true
	if c.err == nil {
		c.err = fmt.Errorf("%w: %w", ErrDisconnected, cause)
	}
	subs := c.subs
	c.subs = map[uint64]*subscription{}
	c.mu.Unlock()
	c.idle.Stop()
	for _, s := range subs {
		s.wake()
	}
	close(c.done)
	_ = c.conn.Close()
}

// frameReader reads frames from the socket, keeping a frame cut short by a
// read deadline for the next read: a deadline is how a reader is asked to
// let go, so it must not lose the stream's step.
type frameReader struct {
	conn net.Conn
	buf  []byte // unread bytes are buf[off:]
	off  int
}

// readSize is the least one read asks for.
const readSize = 4 << 10

// next returns the next frame's body, valid until the next call. An error
// leaves what was read so far for the next call.
func (r *frameReader) next() ([]byte, error) {
	for {
		have := r.buf[r.off:]
		if len(have) >= 4 {
			size := binary.BigEndian.Uint32(have)
			if size > uplinkwire.MaxFrame {
				return nil, fmt.Errorf("uplinkwire: the peer announced a %d-byte frame, over the %d-byte limit", size, uplinkwire.MaxFrame)
			}
			if end := 4 + int(size); len(have) >= end {
				r.off += end
				return have[4:end], nil
			}
		}
		if err := r.fill(); err != nil {
			return nil, err
		}
	}
}

// fill reads once more into the buffer, moving what is unread to its
// start first.
func (r *frameReader) fill() error {
	unread := copy(r.buf, r.buf[r.off:])
	r.buf, r.off = r.buf[:unread], 0
	need := readSize
	if unread >= 4 {
		need = max(need, 4+int(binary.BigEndian.Uint32(r.buf))-unread)
	}
	if cap(r.buf)-unread < need {
		grown := make([]byte, unread, unread+need)
		copy(grown, r.buf)
		r.buf = grown
	}
	n, err := r.conn.Read(r.buf[unread:cap(r.buf)])
	r.buf = r.buf[:unread+n]
	if n > 0 {
		return nil
	}
	if err == nil {
		err = fmt.Errorf("daemon: an empty read")
	}
	return err
}
