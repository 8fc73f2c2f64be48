package uplink

import (
	"errors"
	"testing"
	"time"

	"github.com/astrid-go/astrid/hostapi"
)

// scriptedNet answers NetRead from a script: each step is bytes or an
// error; reads never return more than asked.
type scriptedNet struct {
	hostapi.Net
	steps []any
}

func (s *scriptedNet) NetRead(_ hostapi.NetHandle, max int, _ time.Duration) ([]byte, error) {
	if len(s.steps) == 0 {
		return nil, hostapi.Errorf(hostapi.CodeTimeout, "net_read", "nothing")
	}
	switch v := s.steps[0].(type) {
	case error:
		s.steps = s.steps[1:]
		return nil, v
	case []byte:
		n := min(max, len(v))
		if n == len(v) {
			s.steps = s.steps[1:]
		} else {
			s.steps[0] = v[n:]
		}
		return v[:n], nil
	}
	panic("bad step")
}

func TestFrameReader(t *testing.T) {
	timeout := hostapi.Errorf(hostapi.CodeTimeout, "net_read", "nothing")
	closed := hostapi.Errorf(hostapi.CodeClosed, "net_read", "gone")
	for _, tc := range []struct {
		name     string
		steps    []any
		body     string
		code     hostapi.Code
		midFrame bool
	}{
		{"whole", []any{[]byte("\x00\x00\x00\x02hi")}, "hi", hostapi.CodeOK, false},
		{"byte by byte", []any{[]byte{0}, []byte{0}, []byte{0}, []byte{2}, []byte("h"), []byte("i")}, "hi", hostapi.CodeOK, false},
		{"empty body", []any{[]byte{0, 0, 0, 0}}, "", hostapi.CodeOK, false},
		{"idle: in step", []any{timeout}, "", hostapi.CodeTimeout, false},
		{"closed before a frame", []any{closed}, "", hostapi.CodeClosed, false},
		{"cut in the header", []any{[]byte{0, 0}, timeout}, "", hostapi.CodeTimeout, true},
		{"cut in the body", []any{[]byte("\x00\x00\x00\x05ab"), closed}, "", hostapi.CodeClosed, true},
		{"2 GiB declared", []any{[]byte{0x80, 0, 0, 0}}, "", hostapi.CodeTooLarge, false},
		{"one byte over", []any{[]byte{0, 0x10, 0, 1}}, "", hostapi.CodeTooLarge, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &frameReader{n: &scriptedNet{steps: tc.steps}, stream: 1}
			body, err := r.next(time.Second)
			if hostapi.CodeOf(err) != tc.code || errors.Is(err, errMidFrame) != tc.midFrame {
				t.Fatalf("err = %v (code %s, mid-frame %v), want %s, mid-frame %v", err, hostapi.CodeOf(err), errors.Is(err, errMidFrame), tc.code, tc.midFrame)
			}
			if err == nil && string(body) != tc.body {
				t.Fatalf("body = %q, want %q", body, tc.body)
			}
		})
	}
}

// Frames that arrive together are read one by one, from the buffer.
func TestFrameReaderKeepsWhatFollowsAFrame(t *testing.T) {
	net := &scriptedNet{steps: []any{[]byte("\x00\x00\x00\x01a\x00\x00\x00\x02bc\x00\x00"), []byte("\x00\x01d")}}
	r := &frameReader{n: net, stream: 1}
	for _, want := range []string{"a", "bc", "d"} {
		body, err := r.next(time.Second)
		if err != nil || string(body) != want {
			t.Fatalf("next = %q, %v; want %q", body, err, want)
		}
	}
	if _, err := r.next(time.Second); hostapi.CodeOf(err) != hostapi.CodeTimeout {
		t.Fatalf("after the frames: %v, want a timeout", err)
	}
}
