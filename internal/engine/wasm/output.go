package wasm

import (
	"bytes"
	"log/slog"
	"sync"
)

// maxLine caps one logged line of guest output.
const maxLine = 4096

// lineLog sends a guest's stdout or stderr to the kernel log, one record
// per line, tagged with the capsule (the logger carries its id).
type lineLog struct {
	log    *slog.Logger
	stream string
	mu     sync.Mutex
	buf    []byte
}

func newLineLog(log *slog.Logger, stream string) *lineLog {
	return &lineLog{log: log, stream: stream}
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			l.buf = append(l.buf, p...)
			if len(l.buf) >= maxLine {
				l.emit()
			}
			break
		}
		l.buf = append(l.buf, p[:i]...)
		l.emit()
		p = p[i+1:]
	}
	return n, nil
}

func (l *lineLog) emit() {
	line := l.buf
	if len(line) > maxLine {
		line = line[:maxLine]
	}
	l.log.Info("guest output", "stream", l.stream, "line", string(line))
	l.buf = l.buf[:0]
}

func (l *lineLog) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) > 0 {
		l.emit()
	}
}
