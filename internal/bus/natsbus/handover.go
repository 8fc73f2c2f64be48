package natsbus

import (
	"cmp"
	"slices"

	"github.com/nats-io/nats.go"
)

// While a receiver replaces another (its grants grew, or the host's
// credentials were renewed), both are members of the host's queue groups:
// nats-server hands each message to one of them, so each gets part of a
// publisher's stream, in order, and their two read loops interleave in the
// receive channel. The consumer holds what arrives between the two marks
// the replacement puts in the channel — before the new receiver subscribes,
// after the old one has drained — and hands it over with each publisher's
// envelopes back in the order their bus stamped them (seq), so one
// publisher's envelopes reach this host in order across the replacement.

// handoverStart and handoverEnd are the marks, told apart by address.
var handoverStart, handoverEnd = &nats.Msg{}, &nats.Msg{}

// mark puts m in the receive channel, after every message already there.
func (t *Transport) mark(m *nats.Msg) {
	select {
	case t.in <- m:
	case <-t.done:
	}
}

// inPublishOrder reorders held so that the messages of each publisher
// (publishing host, capsule) are in seq order, each publisher keeping the
// places its messages held. A message that does not decode keeps its
// place; receive refuses it.
func inPublishOrder(held []*nats.Msg) []*nats.Msg {
	type publisher struct{ host, source string }
	type place struct {
		at  int
		seq uint64
	}
	streams := make(map[publisher][]place)
	for i, m := range held {
		host, _, body, err := splitFrame(m.Subject, m.Data)
		if err != nil {
			continue
		}
		e, err := decodeEnvelope(m.Subject, body, "")
		if err != nil {
			continue
		}
		p := publisher{host: string(host), source: e.SourceID}
		streams[p] = append(streams[p], place{at: i, seq: e.Seq})
	}
	out := slices.Clone(held)
	for _, places := range streams {
		bySeq := slices.Clone(places)
		slices.SortStableFunc(bySeq, func(a, b place) int { return cmp.Compare(a.seq, b.seq) })
		for i, p := range places {
			out[p.at] = held[bySeq[i].at]
		}
	}
	return out
}
