package natsbus

import (
	"encoding/json"
	"fmt"

	"github.com/astrid-go/astrid/ipc"
)

// encode is the bytes an envelope travels as: its own JSON wire form
// (ipc.Envelope.MarshalJSON), so every field the envelope has — including
// any added later, such as a trace context — crosses hosts without this
// package listing them.
func encode(e *ipc.Envelope) ([]byte, error) {
	data, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("natsbus: encode envelope on %s from %s: %w", e.Topic, e.SourceID, err)
	}
	return data, nil
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
	e := new(ipc.Envelope)
	if err := json.Unmarshal(data, e); err != nil {
		return nil, fmt.Errorf("natsbus: decode envelope on %s: %w", subject, err)
	}
	if !ipc.ValidJSON(e.Payload) {
		return nil, fmt.Errorf("natsbus: envelope on %s: payload is not valid JSON", subject)
	}
	e.SourceID, e.Topic = source, topic
	return e, nil
}
