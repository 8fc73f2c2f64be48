package natsbus

import (
	"encoding/binary"
	"hash/fnv"
	"slices"
	"time"
)

// election says, for an envelope published on host pubHost with sequence
// number seq, which of this host's capsules intercept it. A capsule loaded
// on several hosts intercepts each envelope once (DESIGN §9: one host serves
// each call):
//
//   - on the publishing host, if it is loaded there: that host's dispatcher
//     already ran it, so no other host does;
//   - otherwise on one of the hosts serving it, chosen by rendezvous hashing
//     of (capsule, publishing host, seq, host): every host computes the
//     same choice from the same presence, and calls spread over the hosts.
//
// Which hosts serve a capsule comes from presence (presence.go); a host
// not heard of yet is taken as serving nothing, so while announcements
// settle an envelope may be intercepted twice or, if a host left unheard,
// not at all.
//
// The consuming goroutine keeps one election and resets it per envelope,
// so that delivering an envelope allocates no closure.
type election struct {
	t *Transport
	// pubHost aliases the received frame; host is its string, made at the
	// first question.
	pubHost []byte
	host    string
	seq     uint64
	// peers is read once per envelope, and only for an envelope some
	// capsule here intercepts: most envelopes only reach routes.
	peers map[string]HostInfo
	read  bool
}

func (el *election) reset(pubHost []byte, seq uint64) {
	el.pubHost, el.host, el.seq, el.peers, el.read = pubHost, "", seq, nil, false
}

// runs reports whether capsule intercepts the current envelope here.
func (el *election) runs(capsule string) bool {
	if !el.read {
		el.peers, el.host, el.read = el.t.currentPeers(time.Now()), string(el.pubHost), true
	}
	self, pubHost := el.t.opts.HostID, el.host
	if pub, ok := el.peers[pubHost]; ok && serves(pub, capsule) {
		return false
	}
	return electedHost(el.peers, capsule, pubHost, el.seq, self) == self
}

// electedHost is the host that intercepts an envelope published on pubHost
// with sequence number seq for capsule: the highest election score among
// candidate (if not empty) and the peers other than pubHost that serve
// capsule; "" if none does.
func electedHost(peers map[string]HostInfo, capsule, pubHost string, seq uint64, candidate string) string {
	best, bestScore := candidate, uint64(0)
	if candidate != "" {
		bestScore = electionScore(capsule, pubHost, seq, candidate)
	}
	for id, h := range peers {
		if id == pubHost || !serves(h, capsule) {
			continue
		}
		if s := electionScore(capsule, pubHost, seq, id); best == "" || s > bestScore || s == bestScore && id < best {
			best, bestScore = id, s
		}
	}
	return best
}

func serves(h HostInfo, capsule string) bool {
	_, found := slices.BinarySearch(h.Capsules, capsule)
	return found
}

// electionScore is a host's weight for one envelope and capsule: FNV-1a, the
// same on every host and every run.
func electionScore(capsule, pubHost string, seq uint64, host string) uint64 {
	h := fnv.New64a()
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], seq)
	for _, part := range [][]byte{[]byte(capsule), {0}, []byte(pubHost), {0}, n[:], []byte(host)} {
		_, _ = h.Write(part)
	}
	return h.Sum64()
}
