package natsbus

import (
	"encoding/binary"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/astrid-go/astrid/ipc"
)

// A capsule served on several hosts intercepts each envelope on one of them
// (DESIGN §9), and NATS makes the choice: each host subscribes to each of
// its interceptor patterns in a queue group named by the capsules of the
// host intercepting that pattern, and NATS hands each envelope to one
// member of each group. Hosts serving the same capsules share the groups,
// and the member handed an envelope runs those capsules as one chain, in
// priority order, as the publishing host would. The publishing host's
// dispatcher has already run its own capsules' interceptors, so its frame
// lists them (codec.go), and the member leaves those out of the chain.
// Replies are the exception: they run on the host that published their
// request (Transport.receive).

// interceptGroupPrefix starts the queue group of an interceptor
// subscription, the capsules' ids following, joined by ','; a host's routes'
// group is its bare id, which holds no '.'.
const interceptGroupPrefix = "i."

// interceptGroup is the capsules queue group names, nil for a routes' group.
func interceptGroup(queue string) []string {
	ids, ok := strings.CutPrefix(queue, interceptGroupPrefix)
	if !ok {
		return nil
	}
	return strings.Split(ids, ",")
}

// interceptKeysLocked is the host's interceptor subscriptions: each
// pattern's subject in the group of the capsules intercepting it here.
// t.mu must be held.
func (t *Transport) interceptKeysLocked() map[subKey]int {
	byPattern := make(map[string][]string)
	for _, id := range sortedKeys(t.capsules) {
		for _, p := range t.capsules[id].intercepts {
			if g, err := SubscribeGrant(p); err == nil && !slices.Contains(byPattern[g], id) {
				byPattern[g] = append(byPattern[g], id)
			}
		}
	}
	keys := make(map[subKey]int, len(byPattern))
	for subject, ids := range byPattern {
		keys[subKey{subject: subject, queue: interceptGroupPrefix + strings.Join(ids, ",")}] = 1
	}
	return keys
}

// localIntercepts is what this host's capsules intercept, replaced (never
// changed) at each Attach and Detach, so that Forward reads it without t.mu.
type localIntercepts struct {
	// ids are the capsules with at least one interceptor, sorted.
	ids      []string
	patterns map[string][]string
	// cache maps a topic to its ran list; cached counts its entries.
	cache  sync.Map
	cached atomic.Int64
}

// maxCachedTopics bounds the topics whose ran list is remembered; past it
// the list is computed at each publish.
const maxCachedTopics = 4096

func newLocalIntercepts(capsules map[string]*attachment) *localIntercepts {
	li := &localIntercepts{patterns: make(map[string][]string)}
	for id, a := range capsules {
		if len(a.intercepts) > 0 {
			li.ids = append(li.ids, id)
			li.patterns[id] = a.intercepts
		}
	}
	slices.Sort(li.ids)
	return li
}

// ran is the frame's list of this host's capsules intercepting topic: its
// dispatcher ran them before Forward.
func (li *localIntercepts) ran(topic string) []byte {
	if li == nil || len(li.ids) == 0 {
		return nil
	}
	if v, ok := li.cache.Load(topic); ok {
		return v.([]byte)
	}
	var enc []byte
	for _, id := range li.ids {
		if slices.ContainsFunc(li.patterns[id], func(p string) bool { return ipc.MatchInterceptor(p, topic) }) {
			enc = binary.AppendUvarint(enc, uint64(len(id)))
			enc = append(enc, id...)
		}
	}
	if li.cached.Add(1) <= maxCachedTopics {
		li.cache.Store(topic, enc)
	}
	return enc
}
