package natsbus

import (
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
		data, err := encode(e)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decode("astrid.cap.a.b", data)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(e)
		have, _ := json.Marshal(got)
		if string(want) != string(have) {
			t.Fatalf("decoded %s\nwant    %s", have, want)
		}
	}
}

func TestDecodeRefusesBadFrames(t *testing.T) {
	good, _ := encode(&ipc.Envelope{Topic: "a", Payload: json.RawMessage(`1`), SourceID: "c"})
	for name, data := range map[string][]byte{
		"empty":               nil,
		"length past the end": {0x7f, '{', '}'},
		"huge length":         {0xff, 0xff, 0xff, 0xff, 0x0f},
		"meta not JSON":       append([]byte{2}, "no1"...),
		"payload not JSON":    append(good[:len(good)-1:len(good)-1], '{'),
		"no payload":          good[:len(good)-1],
	} {
		if _, err := decode("astrid.c.a", data); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// FuzzDecode: decode never panics, and what it accepts encodes back to a
// frame that decodes to the same envelope.
func FuzzDecode(f *testing.F) {
	good, _ := encode(&ipc.Envelope{Topic: "a", Payload: json.RawMessage(`{"k":1}`), SourceID: "c", Principal: "p", Seq: 3, Timestamp: 9})
	f.Add(good)
	f.Add([]byte{0})
	f.Add([]byte{2, '{', '}', '1'})
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := decode("astrid.c.a", data)
		if err != nil {
			return
		}
		again, err := encode(e)
		if err != nil {
			t.Fatal(err)
		}
		e2, err := decode("astrid.c.a", again)
		if err != nil {
			t.Fatalf("re-encoded frame refused: %v", err)
		}
		a, _ := json.Marshal(e)
		b, _ := json.Marshal(e2)
		if string(a) != string(b) {
			t.Fatalf("%s != %s", a, b)
		}
	})
}
