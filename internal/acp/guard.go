package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
)

// maxFrame is the longest JSON-RPC message taken from the editor. The
// SDK's reader ends the connection on a line over 10 MiB, so a longer one
// is refused here and skipped before it gets there.
const maxFrame = 8 << 20

// lockedWriter serialises whole messages on the editor's input: the SDK
// writes each message with one Write, and the guard's error answers go
// through the same lock, so no two lines interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// guard is the reader the SDK reads: the editor's lines, less those that
// would end the connection or vanish unanswered. A line that is not JSON
// is answered with a parse error (-32700), one that is JSON but not a
// JSON-RPC message with an invalid request (-32600), one longer than
// maxFrame with an invalid request naming the limit; each is logged by
// size, never by content, and skipped. Memory stays bounded by maxFrame
// whatever the line's length.
type guard struct {
	r    *bufio.Reader
	out  io.Writer
	log  *slog.Logger
	line []byte // the current line, being read
	next []byte // a checked line with its newline, handed on by Read
	// open is closed by Serve once the connection is set up: the SDK
	// starts reading as it is constructed, before its logger and our
	// agent's conn are set, so nothing is handed on before then (no
	// handler may see a half-built connection).
	open chan struct{}
}

func newGuard(in io.Reader, out io.Writer, log *slog.Logger) *guard {
	return &guard{r: bufio.NewReaderSize(in, 64<<10), out: out, log: log, open: make(chan struct{})}
}

// Read hands on the next checked line.
func (g *guard) Read(p []byte) (int, error) {
	<-g.open
	for len(g.next) == 0 {
		line, err := g.readLine()
		if len(line) > 0 {
			g.next = g.check(line)
		}
		if err != nil && len(g.next) == 0 {
			return 0, err
		}
	}
	n := copy(p, g.next)
	g.next = g.next[n:]
	return n, nil
}

// readLine returns the next line without its newline; a line over
// maxFrame is answered and dropped (returned empty). err is io.EOF (or
// the reader's error) at the end, with the last unterminated line.
func (g *guard) readLine() ([]byte, error) {
	g.line = g.line[:0]
	over := 0
	for {
		chunk, err := g.r.ReadSlice('\n')
		if over == 0 && len(g.line)+len(chunk) <= maxFrame+1 {
			g.line = append(g.line, chunk...)
		} else {
			if over == 0 {
				over = len(g.line)
				g.line = g.line[:0]
			}
			over += len(chunk)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && !errors.Is(err, io.EOF):
			return nil, err
		}
		if over > 0 {
			g.refuse(nil, -32600, "Invalid request", "the message is longer than the largest one taken (8 MiB)", "bytes", over)
			if err != nil {
				return nil, err
			}
			return nil, nil
		}
		line := bytes.TrimRight(g.line, "\r\n")
		if len(line) > maxFrame {
			g.refuse(nil, -32600, "Invalid request", "the message is longer than the largest one taken (8 MiB)", "bytes", len(line))
			line = nil
		}
		return line, err
	}
}

// message is what the SDK needs a line to decode as (its own anyMessage).
type message struct {
	JSONRPC string           `json:"jsonrpc"`
	ID      *json.RawMessage `json:"id,omitempty"`
	Method  string           `json:"method,omitempty"`
	Params  json.RawMessage  `json:"params,omitempty"`
	Result  json.RawMessage  `json:"result,omitempty"`
	Error   json.RawMessage  `json:"error,omitempty"`
}

// check returns line with a newline when the SDK can take it, else
// answers it and returns nil.
func (g *guard) check(line []byte) []byte {
	if len(bytes.TrimSpace(line)) == 0 {
		return nil
	}
	if !json.Valid(line) {
		g.refuse(nil, -32700, "Parse error", "the message is not JSON", "bytes", len(line))
		return nil
	}
	var m message
	if err := json.Unmarshal(line, &m); err != nil || m.ID == nil && m.Method == "" {
		var id *json.RawMessage
		var probe struct {
			ID *json.RawMessage `json:"id"`
		}
		if json.Unmarshal(line, &probe) == nil {
			id = probe.ID
		}
		g.refuse(id, -32600, "Invalid request", "the message is not a JSON-RPC request, notification or response", "bytes", len(line))
		return nil
	}
	out := make([]byte, 0, len(line)+1)
	return append(append(out, line...), '\n')
}

// refuse answers a message that cannot be taken with a JSON-RPC error
// (id null when it had none) and logs why.
func (g *guard) refuse(id *json.RawMessage, code int, msg, why string, args ...any) {
	g.log.Warn("acp: a message from the editor was refused: "+why, args...)
	rid := json.RawMessage("null")
	if id != nil {
		rid = *id
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   any             `json:"error"`
	}{"2.0", rid, map[string]any{"code": code, "message": msg, "data": why}})
	if err != nil {
		return
	}
	_, _ = g.out.Write(append(b, '\n'))
}
