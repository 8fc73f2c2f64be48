package natsbus

import "slices"

// election says, for an envelope published on host pubHost with sequence
// number seq, which of this host's capsules intercept it. A capsule loaded
// on several hosts intercepts each envelope once (DESIGN §9: one host serves
// each call):
//
//   - on the publishing host, if it is loaded there: that host's dispatcher
//     already ran it, so no other host does;
//   - otherwise on one of the hosts serving it, chosen by rendezvous hashing
//     of (capsule, publishing host, seq, host) among the hosts the publisher
//     knew of when it published (the view its frame carries, view.go): every
//     host computes the publisher's choice, and calls spread over the hosts.
//     If the publisher knew of no host serving the capsule (it has not
//     heard of them yet), among the hosts this one knows of.
//
// What each of those hosts serves comes from this host's presence
// (presence.go); a host not heard of yet is taken as serving nothing, so
// while announcements settle an envelope may be intercepted twice or not at
// all.
//
// The consuming goroutine keeps one election and resets it per envelope,
// so that delivering an envelope allocates no closure.
type election struct {
	t *Transport
	// pubHost and view alias the received frame; host is pubHost's string,
	// made at the first question.
	pubHost, view []byte
	host          string
	seq           uint64
	// known is read once per envelope, and only for an envelope some
	// capsule here intercepts: most envelopes only reach routes.
	known *peerView
	read  bool
}

func (el *election) reset(pubHost, view []byte, seq uint64) {
	el.pubHost, el.view, el.host, el.seq, el.known, el.read = pubHost, view, "", seq, nil, false
}

// runs reports whether capsule intercepts the current envelope here.
func (el *election) runs(capsule string) bool {
	if !el.read {
		el.known, el.host, el.read = el.t.peers(), string(el.pubHost), true
	}
	self := el.t.opts.HostID
	if pub, ok := el.known.lookup(el.host); ok && serves(pub, capsule) {
		return false
	}
	if h := electedIn(el.view, el.known, capsule, el.host, el.seq, self); h != "" {
		return h == self
	}
	// The publisher knew of no host serving capsule (it has not heard of
	// this one yet, say): elect among the hosts this one knows of, so that
	// a capsule loaded on one host still intercepts.
	return electedKnown(el.known.hosts, capsule, el.host, el.seq, self) == self
}

// electedKnown is the host electedIn would pick if the view were every host
// in hosts: self, and those that serve capsule, other than pubHost.
func electedKnown(hosts map[string]HostInfo, capsule, pubHost string, seq uint64, self string) string {
	best, bestScore := self, electionScore(capsule, pubHost, seq, []byte(self))
	for id, h := range hosts {
		if id == pubHost || id == self || !serves(h, capsule) {
			continue
		}
		if s := electionScore(capsule, pubHost, seq, []byte(id)); wins(s, []byte(id), best, bestScore) {
			best, bestScore = id, s
		}
	}
	return best
}

// wins reports whether a host id scoring s beats the best so far: the
// higher score, on a tie the smaller id; best "" is no host yet.
func wins(s uint64, id []byte, best string, bestScore uint64) bool {
	return best == "" || s > bestScore || s == bestScore && string(id) < best
}

func serves(h HostInfo, capsule string) bool {
	_, found := slices.BinarySearch(h.Capsules, capsule)
	return found
}

// electionScore is a host's weight for one envelope and capsule: FNV-1a, the
// same on every host and every run.
func electionScore(capsule, pubHost string, seq uint64, host []byte) uint64 {
	h := uint64(fnvOffset)
	h = fnvString(h, capsule)
	h = fnvByte(h, 0)
	h = fnvString(h, pubHost)
	h = fnvByte(h, 0)
	for i := 7; i >= 0; i-- {
		h = fnvByte(h, byte(seq>>(8*i)))
	}
	for _, b := range host {
		h = fnvByte(h, b)
	}
	return h
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvByte(h uint64, b byte) uint64 { return (h ^ uint64(b)) * fnvPrime }

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = fnvByte(h, s[i])
	}
	return h
}
