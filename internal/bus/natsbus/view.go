package natsbus

import (
	"encoding/binary"
	"slices"
)

// A peerView is what this host knows of the others at one moment: the
// hosts and what each serves, and their ids as every forwarded frame
// carries them (codec.go).
//
// Why the frame carries them: each host learns of the others' arrivals and
// losses on its own connections, at its own moment. If every receiving host
// elected the host that intercepts an envelope from its own view, a host
// that had not yet heard that another was lost would leave the envelope to
// it, while the publisher — which had heard — expected it to run there:
// nobody ran the call and nobody answered it (TestHostLostMidCallTheOtherHostServesTheNext
// failed so under load). Electing among the hosts the publisher knew makes
// the receivers agree with the publisher, whose own loss detection answers
// the call if the host it counted on is gone.
type peerView struct {
	hosts map[string]HostInfo
	// ids is uvarint(len(id)) | id for each host, sorted.
	ids []byte
	// gone is what the hosts lost lately served (at most maxGone): a
	// frame published before this host heard of a loss still lists the
	// lost host, and electing it — as its publisher did — is what keeps
	// this host from running a call that was running there too.
	gone map[string]HostInfo
}

var emptyView = peerView{}

// maxViewBytes bounds a frame's view: a thousand hosts with long ids.
const maxViewBytes = 1 << 18

// maxGone bounds the lost hosts a view remembers.
const maxGone = 64

func newPeerView(hosts map[string]HostInfo) *peerView {
	ids := make([]string, 0, len(hosts))
	for id := range hosts {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var enc []byte
	for _, id := range ids {
		enc = binary.AppendUvarint(enc, uint64(len(id)))
		enc = append(enc, id...)
	}
	return &peerView{hosts: hosts, ids: enc}
}

// next is the view after this one with hosts as the live ones: the hosts
// of this view that hosts lacks join gone, a host back leaves it.
func (v *peerView) next(hosts map[string]HostInfo) *peerView {
	nv := newPeerView(hosts)
	for _, m := range []map[string]HostInfo{v.gone, v.hosts} {
		for id, h := range m {
			if _, live := hosts[id]; live {
				continue
			}
			if nv.gone == nil {
				nv.gone = make(map[string]HostInfo)
			}
			nv.gone[id] = h
		}
	}
	for len(nv.gone) > maxGone { // forget the one heard of longest ago
		oldest := ""
		for id, h := range nv.gone {
			if oldest == "" || h.Seen.Before(nv.gone[oldest].Seen) {
				oldest = id
			}
		}
		delete(nv.gone, oldest)
	}
	return nv
}

// lookup is what host id serves as this view knows: live, or lost lately.
func (v *peerView) lookup(id string) (HostInfo, bool) {
	if v == nil {
		return HostInfo{}, false
	}
	if h, ok := v.hosts[id]; ok {
		return h, true
	}
	h, ok := v.gone[id]
	return h, ok
}

// electedIn is the host that intercepts, for capsule, an envelope published
// on pubHost with sequence number seq: the highest election score among the
// hosts view lists (the publisher's, as its frame carried it) other than
// pubHost that serve capsule, as known says what each serves (a host lost
// since the publisher published counts as it was); self counts as serving
// it. "" if none does, or if view is malformed.
func electedIn(view []byte, known *peerView, capsule, pubHost string, seq uint64, self string) string {
	best, bestScore := "", uint64(0)
	for len(view) > 0 {
		n, k := binary.Uvarint(view)
		if k <= 0 || n > uint64(len(view)-k) {
			return ""
		}
		id := view[k : k+int(n)]
		view = view[k+int(n):]
		if string(id) == pubHost {
			continue
		}
		if string(id) != self {
			if h, ok := known.lookup(string(id)); !ok || !serves(h, capsule) {
				continue
			}
		}
		if s := electionScore(capsule, pubHost, seq, id); wins(s, id, best, bestScore) {
			best, bestScore = string(id), s
		}
	}
	return best
}
