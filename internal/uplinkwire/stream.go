package uplinkwire

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Write writes body as one frame: a 4-byte big-endian length, then body.
func Write(w io.Writer, body []byte) error {
	if len(body) > MaxFrame {
		return fmt.Errorf("uplinkwire: a %d-byte frame is over the %d-byte limit", len(body), MaxFrame)
	}
	buf := make([]byte, 4+len(body))
	binary.BigEndian.PutUint32(buf, uint32(len(body)))
	copy(buf[4:], body)
	_, err := w.Write(buf)
	return err
}

// Read reads one frame's body. A declared length over MaxFrame is an error
// before anything more is read: the stream is then mid-frame, and unusable.
func Read(r io.Reader) ([]byte, error) {
	var header [4]byte
	if _, err := io.ReadFull(r, header[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(header[:])
	if n > MaxFrame {
		return nil, fmt.Errorf("uplinkwire: the peer announced a %d-byte frame, over the %d-byte limit", n, MaxFrame)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("uplinkwire: frame body: %w", err)
	}
	return body, nil
}
