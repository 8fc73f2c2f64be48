package natsbus

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/astrid-go/astrid/ipc"
)

func TestCodecRoundTrip(t *testing.T) {
	for _, e := range []*ipc.Envelope{
		{Topic: "a.b", Payload: json.RawMessage(`{"x":[1,2,"é"]}`), SourceID: "cap", Principal: "alice", Seq: 1, Timestamp: 1},
		{Topic: "a.b", Payload: json.RawMessage(`null`), SourceID: "cap", Seq: 1 << 60, Timestamp: -5,
			Provenance: &ipc.Provenance{Signature: ipc.Signature{0, 255}, DeviceKeyID: "k", Origin: ipc.OriginRemoteGateway}},
	} {
		li := newLocalIntercepts(map[string]*attachment{"router": {intercepts: []string{"a.*"}}, "tool": {intercepts: []string{"a.b"}}, "other": {intercepts: []string{"c"}}})
		data, err := appendFrame(nil, "hostA", li.ran("a.b"), e)
		if err != nil {
			t.Fatal(err)
		}
		host, gotView, got, err := decode("astrid.cap.a.b", data)
		if err != nil {
			t.Fatal(err)
		}
		if host != "hostA" || string(gotView) != "\x06router\x04tool" || !listed(gotView, "tool") || listed(gotView, "other") {
			t.Fatalf("host %q, ran %q", host, gotView)
		}
		want, _ := json.Marshal(e)
		have, _ := json.Marshal(got)
		if string(want) != string(have) {
			t.Fatalf("decoded %s\nwant    %s", have, want)
		}
	}
}

func TestDecodeRefusesBadFrames(t *testing.T) {
	good, _ := appendFrame(nil, "h", nil, &ipc.Envelope{Topic: "a", Payload: json.RawMessage(`1`), SourceID: "c"})
	long := make([]byte, 0, 300)
	long = append(append(long, 0xac, 0x02), make([]byte, 300)...) // a host id of 300 bytes
	for name, data := range map[string][]byte{
		"empty":                     nil,
		"host length past the end":  {0x7f, 'h'},
		"host id too long":          long,
		"huge length":               {0xff, 0xff, 0xff, 0xff, 0x0f},
		"no ran list":               {1, 'h'},
		"ran length past the end":   {1, 'h', 5, 1, 'x'},
		"ran list too long":         {1, 'h', 0x81, 0x80, 0x20},
		"no envelope":               {1, 'h', 0},
		"envelope not binary":       append([]byte{1, 'h'}, `{"topic":"a"}`...),
		"payload not JSON":          append(good[:len(good)-1:len(good)-1], '{'),
		"no payload":                good[:len(good)-1],
		"envelope of another build": append([]byte{1, 'h', 0, 9}, good[4:]...),
	} {
		if _, _, _, err := decode("astrid.c.a", data); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// FuzzDecode: decode parses what arrives from the network. It never
// panics, and what it accepts encodes back to a frame that decodes to the
// same host, ran list and envelope.
func FuzzDecode(f *testing.F) {
	good, _ := appendFrame(nil, "hostA", nil, &ipc.Envelope{Topic: "a", Payload: json.RawMessage(`{"k":1}`), SourceID: "c", Principal: "p", Seq: 3, Timestamp: 9})
	f.Add(good)
	f.Add([]byte{0})
	f.Add([]byte{1, 'h', 0, 1, 0, 0, 0, 0, 0, 0, '1'})
	f.Add([]byte{1, 'h', 3, 2, 'b', 'c', 1, 0, 0, 0, 0, 0, 0, '1'})
	f.Fuzz(func(t *testing.T, data []byte) {
		host, view, e, err := decode("astrid.c.a", data)
		if err != nil {
			return
		}
		listed(view, "tool") // never panics on a malformed list
		again, err := appendFrame(nil, host, view, e)
		if err != nil {
			t.Fatal(err)
		}
		host2, view2, e2, err := decode("astrid.c.a", again)
		if err != nil {
			t.Fatalf("re-encoded frame refused: %v", err)
		}
		a, _ := json.Marshal(e)
		b, _ := json.Marshal(e2)
		if string(a) != string(b) || host != host2 || string(view) != string(view2) {
			t.Fatalf("%s on %q != %s on %q", a, host, b, host2)
		}
	})
}

// TestFrameLeavesTopicAndSourceToTheSubject: the subject carries them, so
// the frame does not repeat them.
func TestFrameLeavesTopicAndSourceToTheSubject(t *testing.T) {
	e := &ipc.Envelope{Topic: "topicmark.x", SourceID: "sourcemark", Payload: json.RawMessage(`1`)}
	data, err := appendFrame(nil, "h", nil, e)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("topicmark")) || bytes.Contains(data, []byte("sourcemark")) {
		t.Fatalf("frame %q repeats the topic or source", data)
	}
	if e.Topic != "topicmark.x" || e.SourceID != "sourcemark" {
		t.Fatalf("appendFrame changed the envelope: %+v", e)
	}
	_, _, got, err := decode("astrid.sourcemark.topicmark.x", data)
	if err != nil || got.Topic != e.Topic || got.SourceID != e.SourceID {
		t.Fatalf("decoded %+v, %v", got, err)
	}
}

// TestCodecAllocations holds the per-message costs BENCHMARKS.md records:
// encoding into a reused buffer allocates nothing, and decoding allocates
// the envelope (with room for the Provenance naming its host) and its
// principal only (the payload aliases the frame).
func TestCodecAllocations(t *testing.T) {
	e := &ipc.Envelope{Topic: "news.today", SourceID: "pub", Principal: "alice", Seq: 7, Timestamp: 1_700_000_000_000_000_000,
		Payload: json.RawMessage(`{"type":"custom","value":{"n":1}}`)}
	buf := make([]byte, 0, 512)
	if n := testing.AllocsPerRun(100, func() {
		buf, _ = appendFrame(buf[:0], "hostA", nil, e)
	}); n != 0 {
		t.Errorf("encoding a frame: %v allocations, want 0", n)
	}
	frame := append([]byte(nil), buf...)
	if n := testing.AllocsPerRun(100, func() {
		_, _, body, _ := splitFrame("astrid.pub.news.today", frame)
		if _, err := decodeEnvelope("astrid.pub.news.today", body, "hostA"); err != nil {
			t.Fatal(err)
		}
	}); n > 2 {
		t.Errorf("decoding a frame: %v allocations, want at most 2 (the envelope, its principal)", n)
	}
}
