package openai

import (
	"bytes"
	"errors"
	"io"
	"net/http"
)

// maxLine is the longest SSE line accepted (spec §6.2): a line this long
// is a broken or hostile server, not a chunk.
const maxLine = 1 << 20

// errorBodyKept is how much of a non-2xx answer's body is kept for the
// error message (spec §6.2: ≤ 4 KiB).
const errorBodyKept = 4 << 10

var errLineTooLong = errors.New("a line of the stream reached 1 MiB")

// guard sits between the SDK and the host's HTTP client for one request.
// It sees the bytes the SDK reads, which is where three things the SDK does
// not report can be seen (docs/rationale/providers.md, "How does the OpenAI provider tell a
// finished stream from a broken one?"): whether the server sent its end
// marker (data: [DONE]); a line reaching maxLine (the SDK's scanner takes
// 32 MiB); and a connection that stalls (every byte feeds the request's
// sdk.Watchdog, which ends the request's context after idle without one).
// It also keeps the status, Retry-After and the head of the body of a
// non-2xx answer, so the error can be told whatever shape its body has.
// Only the goroutine driving the request touches it.
type guard struct {
	base http.RoundTripper
	feed func()

	status     int
	retryAfter http.Header
	errBody    []byte
	sawDone    bool
	// line is the length of the current line so far, head its first bytes
	// (enough to recognise the end marker).
	line int
	head [16]byte
}

// newGuard guards requests sent through base; feed is called on the
// request and on every byte read.
func newGuard(base http.RoundTripper, feed func()) *guard {
	return &guard{base: base, feed: feed}
}

func (g *guard) touch() { g.feed() }

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	g.touch()
	resp, err := g.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	g.touch()
	g.status = resp.StatusCode
	g.retryAfter = http.Header{}
	for _, h := range []string{"Retry-After", "Retry-After-Ms"} {
		if v := resp.Header.Get(h); v != "" {
			g.retryAfter.Set(h, v)
		}
	}
	resp.Body = &guardedBody{g: g, body: resp.Body, errorBody: resp.StatusCode < 200 || resp.StatusCode > 299}
	return resp, nil
}

// guardedBody is a response body as the guard watches it.
type guardedBody struct {
	g         *guard
	body      io.ReadCloser
	errorBody bool
	total     int
}

func (b *guardedBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if n == 0 {
		return n, err
	}
	g := b.g
	g.touch()
	if b.errorBody {
		b.total += n
		if keep := errorBodyKept - len(g.errBody); keep > 0 {
			g.errBody = append(g.errBody, p[:min(n, keep)]...)
		}
		if b.total >= maxLine {
			return 0, errLineTooLong
		}
		return n, err
	}
	if lerr := g.scan(p[:n]); lerr != nil {
		return 0, lerr
	}
	return n, err
}

func (b *guardedBody) Close() error { return b.body.Close() }

// scan follows the lines of the stream in chunk: their length, and
// whether one is the end marker.
func (g *guard) scan(chunk []byte) error {
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		seg := chunk
		if i >= 0 {
			seg = chunk[:i]
		}
		if g.line < len(g.head) {
			copy(g.head[g.line:], seg)
		}
		g.line += len(seg)
		if g.line >= maxLine {
			return errLineTooLong
		}
		if i < 0 {
			return nil
		}
		if g.line <= len(g.head) && isDone(g.head[:g.line]) {
			g.sawDone = true
		}
		g.line = 0
		chunk = chunk[i+1:]
	}
	return nil
}

// isDone reports whether line is the stream's end marker.
func isDone(line []byte) bool {
	line = bytes.TrimSuffix(line, []byte("\r"))
	v, ok := bytes.CutPrefix(line, []byte("data:"))
	return ok && string(bytes.TrimSpace(v)) == "[DONE]"
}
