package sdk

import (
	"encoding/binary"
	"time"

	"github.com/astrid-go/astrid/hostapi"
)

// Length-prefixed frames over a hostapi.Net stream: a 4-byte big-endian
// length, then that many bytes (the CLI socket's framing, DESIGN §8). They
// live here, not in the kernel: the kernel moves bytes, and what a byte
// stream means is the capsule's business.

// MaxFrame caps a frame's body.
const MaxFrame = 1 << 20

// WriteFrame writes payload as one frame.
func WriteFrame(n hostapi.Net, stream hostapi.NetHandle, payload []byte) error {
	if len(payload) > MaxFrame {
		return hostapi.Errorf(hostapi.CodeTooLarge, "write_frame", "a frame is at most %d bytes, not %d", MaxFrame, len(payload))
	}
	var header [4]byte
	binary.BigEndian.PutUint32(header[:], uint32(len(payload)))
	if err := n.NetWrite(stream, header[:]); err != nil {
		return err
	}
	if len(payload) == 0 {
		return nil
	}
	return n.NetWrite(stream, payload)
}

// ReadFrame reads one frame of at most limit bytes (0 or more than MaxFrame
// means MaxFrame), waiting up to timeout for all of it. It asks the host
// for no byte past the frame, so nothing is held between calls and the next
// frame is read by whichever call comes next.
//
// A frame that starts but does not finish in time (CodeTimeout after its
// first byte), or whose length is over limit (CodeTooLarge), leaves the
// stream in the middle of a frame: close it, as the errors say.
func ReadFrame(n hostapi.Net, stream hostapi.NetHandle, limit int, timeout time.Duration) ([]byte, error) {
	if limit <= 0 || limit > MaxFrame {
		limit = MaxFrame
	}
	if timeout <= 0 || timeout > hostapi.MaxNetWait {
		timeout = hostapi.MaxNetWait
	}
	deadline := time.Now().Add(timeout)
	var header [4]byte
	got, err := readFull(n, stream, header[:], deadline, false)
	if err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(header[:])
	if uint64(size) > uint64(limit) {
		return nil, hostapi.Errorf(hostapi.CodeTooLarge, "read_frame", "the peer announced a %d-byte frame, over the %d-byte limit; close the stream", size, limit)
	}
	body := make([]byte, size)
	if _, err := readFull(n, stream, body, deadline, got > 0); err != nil {
		return nil, err
	}
	return body, nil
}

// readFull fills buf before deadline; begun says bytes of this frame were
// already read, which turns a timeout into a broken stream.
func readFull(n hostapi.Net, stream hostapi.NetHandle, buf []byte, deadline time.Time, begun bool) (int, error) {
	got := 0
	for got < len(buf) {
		wait := time.Until(deadline)
		if wait <= 0 {
			return got, frameTimeout(begun || got > 0)
		}
		b, err := n.NetRead(stream, len(buf)-got, max(wait, time.Millisecond))
		if err != nil {
			if hostapi.CodeOf(err) == hostapi.CodeTimeout {
				return got, frameTimeout(begun || got > 0)
			}
			if hostapi.CodeOf(err) == hostapi.CodeClosed && (begun || got > 0) {
				return got, hostapi.Errorf(hostapi.CodeClosed, "read_frame", "the peer closed the stream in the middle of a frame")
			}
			return got, err
		}
		if len(b) > len(buf)-got {
			return got, hostapi.Errorf(hostapi.CodeInternal, "read_frame", "the host answered %d bytes to a read of %d", len(b), len(buf)-got)
		}
		got += copy(buf[got:], b)
	}
	return got, nil
}

func frameTimeout(midFrame bool) error {
	if midFrame {
		return hostapi.Errorf(hostapi.CodeTimeout, "read_frame", "the frame did not arrive whole in time; the stream is mid-frame, close it")
	}
	return hostapi.Errorf(hostapi.CodeTimeout, "read_frame", "no frame arrived in time")
}
