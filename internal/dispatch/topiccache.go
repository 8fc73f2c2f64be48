package dispatch

import (
	"sync/atomic"

	"github.com/astrid-go/astrid/internal/bus"
)

// A capsule publishes a handful of topics over and over (a tool its result
// topic; the router a tool's execute topic and the consolidated result). For
// the last few, the capsule keeps what publishing them needs besides the
// payload: the fact that the topic was valid and allowed by its [publish]
// ACL (fixed while the capsule is registered), the bus routes it matched
// and the interceptors it matched. A hit turns validation, the ACL match,
// the route index and the interceptor index into string comparisons and
// two pointer comparisons; the resolutions are used only while the bus's
// and the interceptors' tables are the ones they came from.

// topicCacheSize is how many topics a capsule remembers.
const topicCacheSize = 4

// knownTopic is one remembered topic. It is immutable: a stale resolution
// is replaced by a new knownTopic.
type knownTopic struct {
	topic  string
	routes *bus.Resolution
	// links are the interceptors matched in interceptors.
	interceptors *table
	links        []*link
}

type topicCache struct {
	slots [topicCacheSize]atomic.Pointer[knownTopic]
	next  atomic.Uint32
}

// find returns the remembered entry for topic, or nil.
func (tc *topicCache) find(topic string) *knownTopic {
	for i := range tc.slots {
		if k := tc.slots[i].Load(); k != nil && k.topic == topic {
			return k
		}
	}
	return nil
}

// remember stores k in place of an entry for the same topic, else in the
// next slot round robin.
func (tc *topicCache) remember(k *knownTopic) {
	for i := range tc.slots {
		if old := tc.slots[i].Load(); old != nil && old.topic == k.topic {
			tc.slots[i].Store(k)
			return
		}
	}
	tc.slots[tc.next.Add(1)%topicCacheSize].Store(k)
}
