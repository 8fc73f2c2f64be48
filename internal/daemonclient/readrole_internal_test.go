package daemonclient

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/astrid-go/astrid/internal/uplinkwire"
)

// A read cut short by a deadline (how a reader is asked to let go) keeps
// what it read: the next read returns the whole frame, and the one after
// it, so the stream stays in step.
func TestFrameReaderKeepsAFrameCutByADeadline(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	defer server.Close()
	frame := func(body string) []byte {
		b := []byte{0, 0, 0, byte(len(body))}
		return append(b, body...)
	}
	first, second := frame(`{"op":"ok","id":1}`), frame(`{"op":"ok","id":2}`)
	r := frameReader{conn: client}
	written := make(chan error, 1)
	go func() {
		_, err := server.Write(first[:7]) // the length and 3 bytes
		written <- err
	}()
	// Read what was written, then be cut by a deadline mid-frame.
	if err := r.fill(); err != nil {
		t.Fatal(err)
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	_ = client.SetReadDeadline(time.Unix(1, 0))
	if _, err := r.next(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a cut read = %v, want a deadline error", err)
	}
	_ = client.SetReadDeadline(time.Time{})
	go func() {
		_, err := server.Write(append(append([]byte(nil), first[7:]...), second...))
		written <- err
	}()
	for _, want := range []uint64{1, 2} {
		body, err := r.next()
		if err != nil {
			t.Fatal(err)
		}
		f, err := uplinkwire.Decode(body)
		if err != nil || f.ID != want {
			t.Fatalf("frame = %+v, %v; want id %d", f, err, want)
		}
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
}

// A declared length over the limit is refused before anything more is read.
func TestFrameReaderRefusesAnOversizedFrame(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	defer server.Close()
	go func() { _, _ = server.Write([]byte{0x7f, 0xff, 0xff, 0xff}) }()
	r := frameReader{conn: client}
	if _, err := r.next(); err == nil {
		t.Fatal("a 2 GiB frame was accepted")
	}
}
