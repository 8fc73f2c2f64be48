package natsbus

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/astrid-go/astrid/ipc"
)

// A message body is the publishing host's id, the ids of the capsules
// whose interceptors already ran it there (ran: no other host runs them
// again, transport.go) and the envelope's binary form
// (ipc.Envelope.AppendBinary):
//
//	uvarint(len(host)) | host | uvarint(len(ran)) | ran | envelope
//	ran = { uvarint(len(id)) | id }, sorted
//
// The binary form carries every field of the envelope but the two the
// subject carries (topic and source_id, left empty), payload bytes last and
// as published; it replaced the envelope's JSON (and a NATS header for
// the host id), which cost more CPU and allocations than the rest of a
// forwarded publish (BENCHMARKS.md, docs/rationale/nats.md "Why is the envelope binary
// between hosts?"). The receiver checks the payload once with
// ipc.ValidJSON.

// maxHostBytes bounds the host id in a frame: a host id is one topic
// segment (checkCapsuleID), so no longer than a topic.
const maxHostBytes = ipc.MaxTopicBytes

// appendFrame appends the frame of e, published on host where the
// capsules ran lists intercepted it, to dst. The envelope's topic and
// source_id are left out: the subject carries them, and the receiver takes
// them from there only (decodeEnvelope).
func appendFrame(dst []byte, host string, ran []byte, e *ipc.Envelope) ([]byte, error) {
	dst = binary.AppendUvarint(dst, uint64(len(host)))
	dst = append(dst, host...)
	dst = binary.AppendUvarint(dst, uint64(len(ran)))
	dst = append(dst, ran...)
	bare := *e
	bare.Topic, bare.SourceID = "", ""
	out, err := bare.AppendBinary(dst)
	if err != nil {
		return dst, fmt.Errorf("natsbus: encode envelope on %s from %s: %w", e.Topic, e.SourceID, err)
	}
	return out, nil
}

// splitFrame returns the publishing host's id, the capsules that ran the
// envelope there and the encoded envelope; all alias data.
func splitFrame(subject string, data []byte) (host, ran, envelope []byte, err error) {
	n, k := binary.Uvarint(data)
	if k <= 0 || n > maxHostBytes || n > uint64(len(data)-k) {
		return nil, nil, nil, fmt.Errorf("natsbus: envelope on %s: %w", subject, errBadFrame)
	}
	host, data = data[k:k+int(n)], data[k+int(n):]
	n, k = binary.Uvarint(data)
	if k <= 0 || n > maxRanBytes || n > uint64(len(data)-k) {
		return nil, nil, nil, fmt.Errorf("natsbus: envelope on %s: %w", subject, errBadRan)
	}
	return host, data[k : k+int(n)], data[k+int(n):], nil
}

// decodeEnvelope rebuilds an envelope received on subject, published on
// host (set as the envelope's Host; "" leaves it unset). The publisher
// and the topic are taken from the subject — which the broker only let the
// publisher's own connection use — never from the encoded body, which
// anyone holding a connection could have written. A payload that is not
// valid JSON is refused, as dispatch refuses it at publish. The payload
// aliases data.
func decodeEnvelope(subject string, data []byte, host string) (*ipc.Envelope, error) {
	source, topic, err := ParseSubject(subject)
	if err != nil {
		return nil, err
	}
	r := new(received)
	e := &r.e
	if err := e.DecodeBinary(data); err != nil {
		return nil, fmt.Errorf("natsbus: decode envelope on %s: %w", subject, err)
	}
	if !ipc.ValidJSON(e.Payload) {
		return nil, fmt.Errorf("natsbus: envelope on %s: payload is not valid JSON", subject)
	}
	e.SourceID, e.Topic = source, topic
	if host != "" {
		if e.Provenance == nil {
			e.Provenance = &r.p
		}
		e.Provenance.Host = host
	}
	return e, nil
}

// received is a received envelope with room for the Provenance that names
// its host: one allocation where ipc.Envelope.SetHost would add a second
// to most envelopes, which carry no Provenance of their own.
type received struct {
	e ipc.Envelope
	p ipc.Provenance
}

// maxRanBytes bounds a frame's list of capsules that ran the envelope.
const maxRanBytes = 1 << 18

// listed reports whether ran, as a frame carries it, names capsule. A
// malformed list names none.
func listed(ran []byte, capsule string) bool {
	for len(ran) > 0 {
		n, k := binary.Uvarint(ran)
		if k <= 0 || n > uint64(len(ran)-k) {
			return false
		}
		if string(ran[k:k+int(n)]) == capsule {
			return true
		}
		ran = ran[k+int(n):]
	}
	return false
}

var (
	errBadFrame = errors.New("not an envelope frame (host id length out of range)")
	errBadRan   = errors.New("not an envelope frame (intercepting capsules' length out of range)")
)
