package sdk

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/astrid-go/astrid/hostapi"
)

// pipeNet is a hostapi.Net over an in-memory byte queue that hands out at
// most chunk bytes per read, as a socket may.
type pipeNet struct {
	hostapi.Net
	buf    bytes.Buffer
	chunk  int
	reads  int
	closed bool
}

func (p *pipeNet) NetWrite(_ hostapi.NetHandle, data []byte) error {
	p.buf.Write(data)
	return nil
}

func (p *pipeNet) NetRead(_ hostapi.NetHandle, max int, _ time.Duration) ([]byte, error) {
	p.reads++
	if p.buf.Len() == 0 {
		if p.closed {
			return nil, hostapi.Errorf(hostapi.CodeClosed, "net_read", "closed")
		}
		return nil, hostapi.Errorf(hostapi.CodeTimeout, "net_read", "nothing")
	}
	return p.buf.Next(min(max, p.chunk)), nil
}

func TestFramesRoundTripInPieces(t *testing.T) {
	p := &pipeNet{chunk: 3}
	for _, m := range []string{"hello", "", "a longer frame than one read"} {
		if err := WriteFrame(p, 1, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"hello", "", "a longer frame than one read"} {
		got, err := ReadFrame(p, 1, 0, time.Second)
		if err != nil || string(got) != want {
			t.Fatalf("frame %q: %q %v", want, got, err)
		}
	}
	if p.buf.Len() != 0 {
		t.Fatalf("%d bytes left", p.buf.Len())
	}
	if _, err := ReadFrame(p, 1, 0, time.Second); hostapi.CodeOf(err) != hostapi.CodeTimeout {
		t.Fatalf("no frame: %v", err)
	}
}

func TestFrameRefusals(t *testing.T) {
	if err := WriteFrame(&pipeNet{chunk: 1}, 1, make([]byte, MaxFrame+1)); hostapi.CodeOf(err) != hostapi.CodeTooLarge {
		t.Fatalf("huge write: %v", err)
	}
	// A peer announcing 4 GiB is refused before anything is allocated.
	p := &pipeNet{chunk: 64}
	var h [4]byte
	binary.BigEndian.PutUint32(h[:], 0xffffffff)
	p.buf.Write(h[:])
	if _, err := ReadFrame(p, 1, 0, time.Second); hostapi.CodeOf(err) != hostapi.CodeTooLarge {
		t.Fatalf("huge announced frame: %v", err)
	}
	// Over the caller's own limit.
	p = &pipeNet{chunk: 64}
	_ = WriteFrame(p, 1, []byte("0123456789"))
	if _, err := ReadFrame(p, 1, 5, time.Second); hostapi.CodeOf(err) != hostapi.CodeTooLarge {
		t.Fatalf("frame over limit: %v", err)
	}
	// Half a frame, then silence: a timeout that says the stream is mid-frame.
	p = &pipeNet{chunk: 64}
	binary.BigEndian.PutUint32(h[:], 10)
	p.buf.Write(h[:])
	p.buf.WriteString("abc")
	if _, err := ReadFrame(p, 1, 0, time.Second); hostapi.CodeOf(err) != hostapi.CodeTimeout || !bytes.Contains([]byte(err.Error()), []byte("mid-frame")) {
		t.Fatalf("half a frame: %v", err)
	}
	// Half a frame, then the peer closes.
	p = &pipeNet{chunk: 64, closed: true}
	p.buf.Write(h[:])
	p.buf.WriteString("abc")
	if _, err := ReadFrame(p, 1, 0, time.Second); hostapi.CodeOf(err) != hostapi.CodeClosed || !bytes.Contains([]byte(err.Error()), []byte("middle")) {
		t.Fatalf("closed mid-frame: %v", err)
	}
}
