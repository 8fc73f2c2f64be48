package natsbus

import (
	"fmt"
	"slices"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/astrid-go/astrid/ipc"
)

// TestHandoverRestoresEachPublishersOrder: during a receiver's replacement
// the old and the new receiver each get part of a publisher's stream, and
// their read loops interleave. What the consumer held is handed over with
// each publisher's envelopes in seq order, each publisher keeping its
// places, and a frame that does not decode keeping its own.
func TestHandoverRestoresEachPublishersOrder(t *testing.T) {
	frame := func(host, source string, seq uint64) *nats.Msg {
		e := &ipc.Envelope{Topic: "chat.a", SourceID: source, Seq: seq, Payload: []byte(fmt.Sprintf(`"%s/%s/%d"`, host, source, seq))}
		data, err := appendFrame(nil, host, nil, e)
		must(t, err)
		return &nats.Msg{Subject: SubjectPrefix + "." + source + ".chat.a", Data: data}
	}
	bad := &nats.Msg{Subject: SubjectPrefix + ".p.chat.a", Data: []byte{0xff}}
	held := []*nats.Msg{
		frame("hostB", "p", 3), // the new receiver's part of p's stream...
		frame("hostB", "q", 7),
		frame("hostB", "p", 1), // ...read before the old receiver's
		bad,
		frame("hostC", "p", 2), // another host's capsule p: another publisher
		frame("hostB", "p", 2),
		frame("hostC", "p", 1),
	}
	var got []string
	for _, m := range inPublishOrder(held) {
		if m == bad {
			got = append(got, "bad")
			continue
		}
		_, _, e, err := decode(m.Subject, m.Data)
		must(t, err)
		got = append(got, string(e.Payload))
	}
	want := []string{`"hostB/p/1"`, `"hostB/q/7"`, `"hostB/p/2"`, "bad", `"hostC/p/1"`, `"hostB/p/3"`, `"hostC/p/2"`}
	if !slices.Equal(got, want) {
		t.Fatalf("handed over %q, want %q", got, want)
	}
}
