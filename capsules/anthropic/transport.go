package anthropic

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/astrid-go/astrid/sdk"
)

// maxLine caps one line of the event stream (spec §6.2's 1 MiB): the SDK's
// own scanner allows 32 MiB, which a broken or hostile server could make
// the capsule buffer.
const maxLine = 1 << 20

// errLineTooLong ends a stream with a line past maxLine.
var errLineTooLong = fmt.Errorf("a line of the event stream is longer than %d bytes", maxLine)

// guardedTransport wraps the egress client's transport: every response
// body it returns feeds the watchdog on each read (a stalled connection
// ends the request) and refuses a line past maxLine.
type guardedTransport struct {
	base http.RoundTripper
	dog  *sdk.Watchdog
}

func (t guardedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	t.dog.Feed()
	resp.Body = &guardedBody{body: resp.Body, dog: t.dog}
	return resp, nil
}

type guardedBody struct {
	body io.ReadCloser
	dog  *sdk.Watchdog
	line int // bytes since the last newline
	err  error
}

func (b *guardedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.body.Read(p)
	if n > 0 {
		b.dog.Feed()
		for rest := p[:n]; ; {
			i := bytes.IndexByte(rest, '\n')
			if i < 0 {
				b.line += len(rest)
				break
			}
			if b.line+i > maxLine {
				b.line += i
				break
			}
			b.line, rest = 0, rest[i+1:]
		}
		if b.line > maxLine {
			b.err = errLineTooLong
			return 0, b.err
		}
	}
	return n, err
}

func (b *guardedBody) Close() error { return b.body.Close() }

// isLineTooLong reports whether err is (or wraps) errLineTooLong.
func isLineTooLong(err error) bool { return errors.Is(err, errLineTooLong) }
