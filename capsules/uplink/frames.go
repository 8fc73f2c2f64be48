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

// readFrame reads one frame. It waits up to idle for the frame's first
// byte (a CodeTimeout then leaves the stream in step, ready for the next
// wait) and then gives the rest frameWait, so a client idle for a while
// is not cut short when it finally writes. It asks the host for no byte
// past the frame. A declared length over uplinkwire.MaxFrame is
// CodeTooLarge before the body is read.
func readFrame(n hostapi.Net, stream hostapi.NetHandle, idle time.Duration) ([]byte, error) {
	first, err := n.NetRead(stream, 4, idle)
	if err != nil {
		return nil, err
	}
	var header [4]byte
	got := copy(header[:], first)
	deadline := time.Now().Add(frameWait)
	if err := fill(n, stream, header[got:], deadline); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(header[:])
	if size > uplinkwire.MaxFrame {
		return nil, hostapi.Errorf(hostapi.CodeTooLarge, "read_frame", "the peer announced a %d-byte frame, over the %d-byte limit", size, uplinkwire.MaxFrame)
	}
	body := make([]byte, size)
	if err := fill(n, stream, body, deadline); err != nil {
		return nil, err
	}
	return body, nil
}

// fill reads exactly len(buf) bytes before deadline; any failure is
// errMidFrame.
func fill(n hostapi.Net, stream hostapi.NetHandle, buf []byte, deadline time.Time) error {
	for got := 0; got < len(buf); {
		wait := time.Until(deadline)
		if wait <= 0 {
			return errMidFrame
		}
		b, err := n.NetRead(stream, len(buf)-got, wait)
		if err != nil {
			return errors.Join(errMidFrame, err)
		}
		if len(b) > len(buf)-got {
			return errors.Join(errMidFrame, hostapi.Errorf(hostapi.CodeInternal, "read_frame", "the host answered %d bytes to a read of %d", len(b), len(buf)-got))
		}
		got += copy(buf[got:], b)
	}
	return nil
}
