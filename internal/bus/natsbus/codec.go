package natsbus

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/astrid-go/astrid/ipc"
)

// A message body is the envelope in two parts:
//
//	uvarint(len(meta)) | meta | payload
//
// meta is the envelope without its payload in its own JSON wire form
// (ipc.Envelope.MarshalJSON), so every field the envelope has — including
// any added later, such as a trace context — crosses hosts without this
// package listing them; payload is the payload's bytes as published. The
// payload is kept out of the JSON because encoding/json would validate and
// compact it on the way in and validate it again on the way out, the
// largest cost of a forwarded envelope (BENCHMARKS.md); the receiver checks
// it once with ipc.ValidJSON instead.

// maxMetaBytes bounds the envelope's JSON without its payload: topic,
// ids, principal, timestamp and a signature are far below it.
const maxMetaBytes = 64 << 10

func encode(e *ipc.Envelope) ([]byte, error) {
	bare := *e
	bare.Payload = nil
	meta, err := bare.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("natsbus: encode envelope on %s from %s: %w", e.Topic, e.SourceID, err)
	}
	out := make([]byte, 0, binary.MaxVarintLen32+len(meta)+len(e.Payload))
	out = binary.AppendUvarint(out, uint64(len(meta)))
	out = append(out, meta...)
	return append(out, e.Payload...), nil
}

// decode rebuilds an envelope received on subject. The publisher and the
// topic are taken from the subject — which the broker only let the
// publisher's own connection use — never from the encoded body, which
// anyone holding a connection could have written. A payload that is not
// valid JSON is refused, as dispatch refuses it at publish.
func decode(subject string, data []byte) (*ipc.Envelope, error) {
	source, topic, err := ParseSubject(subject)
	if err != nil {
		return nil, err
	}
	n, k := binary.Uvarint(data)
	if k <= 0 || n > maxMetaBytes || n > uint64(len(data)-k) {
		return nil, fmt.Errorf("natsbus: envelope on %s: %w", subject, errBadFrame)
	}
	meta, payload := data[k:k+int(n)], data[k+int(n):]
	e := new(ipc.Envelope)
	if err := e.UnmarshalJSON(meta); err != nil {
		return nil, fmt.Errorf("natsbus: decode envelope on %s: %w", subject, err)
	}
	if !ipc.ValidJSON(payload) {
		return nil, fmt.Errorf("natsbus: envelope on %s: payload is not valid JSON", subject)
	}
	e.Payload = payload
	e.SourceID, e.Topic = source, topic
	return e, nil
}

var errBadFrame = errors.New("not an envelope frame (length prefix out of range)")
