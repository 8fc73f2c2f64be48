package uplink

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/astrid-go/astrid/hostapi"
	"github.com/astrid-go/astrid/internal/uplinkwire"
)

// frameWait bounds one frame's arrival once its first byte has come.
const frameWait = 30 * time.Second

// errMidFrame is a frame cut by frameWait or by the peer: the stream is
// out of step and must be closed.
var errMidFrame = errors.New("the frame did not arrive whole")

// frameReader reads one client's frames, buffering what a read brings
// past a frame for the next one (the uplink owns the stream).
type frameReader struct {
	n      hostapi.Net
	stream hostapi.NetHandle
	buf    []byte
}

// readChunk is what one read asks for beyond what a frame still needs: a
// request (a tool call, an approval) is usually smaller, so a frame costs
// one host read. The host allocates what a read asks for, per read, so
// asking for 4 KiB cost 3 KiB of garbage per request for nothing; a
// longer frame (a prompt with a pasted file) takes a second read.
const readChunk = 1 << 10

// next reads one frame. It waits up to idle for the frame's first byte (a
// CodeTimeout then leaves the stream in step, ready for the next wait)
// and then gives the rest frameWait, so a client idle for a while is not
// cut short when it finally writes. A declared length over
// uplinkwire.MaxFrame is CodeTooLarge before the body is read.
func (r *frameReader) next(idle time.Duration) ([]byte, error) {
	if len(r.buf) == 0 {
		b, err := r.n.NetRead(r.stream, readChunk, idle)
		if err != nil {
			return nil, err
		}
		r.buf = append(r.buf, b...)
	}
	deadline := time.Now().Add(frameWait)
	if err := r.fill(4, deadline); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(r.buf)
	if size > uplinkwire.MaxFrame {
		return nil, hostapi.Errorf(hostapi.CodeTooLarge, "read_frame", "the peer announced a %d-byte frame, over the %d-byte limit", size, uplinkwire.MaxFrame)
	}
	end := 4 + int(size)
	if err := r.fill(end, deadline); err != nil {
		return nil, err
	}
	body := append([]byte(nil), r.buf[4:end]...)
	r.buf = r.buf[:copy(r.buf, r.buf[end:])]
	return body, nil
}

// fill reads until the buffer holds n bytes, before deadline; any failure
// is errMidFrame.
func (r *frameReader) fill(n int, deadline time.Time) error {
	for len(r.buf) < n {
		wait := time.Until(deadline)
		if wait <= 0 {
			return errMidFrame
		}
		b, err := r.n.NetRead(r.stream, min(max(n-len(r.buf), readChunk), hostapi.MaxNetRead), wait)
		if err != nil {
			return errors.Join(errMidFrame, err)
		}
		r.buf = append(r.buf, b...)
	}
	return nil
}

// framed is body with its length prefix, ready for writeFramed.
func framed(body []byte) []byte {
	out := make([]byte, 4, 4+len(body))
	binary.BigEndian.PutUint32(out, uint32(len(body)))
	return append(out, body...)
}

// writeFramed writes a framed frame in as few host writes as the write
// limit allows (one, unless the frame is within 4 bytes of 1 MiB): a write
// is a system call and a deadline set, the most of what an answer costs.
func writeFramed(n hostapi.Net, stream hostapi.NetHandle, b []byte) error {
	for len(b) > 0 {
		chunk := b[:min(len(b), hostapi.MaxNetWrite)]
		if err := n.NetWrite(stream, chunk); err != nil {
			return err
		}
		b = b[len(chunk):]
	}
	return nil
}
