package dispatch

import (
	"sync"
	"sync/atomic"
)

// maxOwnersCached bounds how many topics one table snapshot remembers
// answers for: the topics asked about come from capsules, and a capsule
// asking about ever new ones must not grow the kernel's memory. Past the
// bound, answers are computed each time, as before there was a cache.
const maxOwnersCached = 256

// ownersCache maps a topic to the ids of the capsules that intercept it, for
// one immutable table. Its zero value is ready; the stored slices are never
// modified, only copied out.
type ownersCache struct {
	m sync.Map // topic → []string
	n atomic.Int32
}

func (c *ownersCache) get(topic string) ([]string, bool) {
	v, ok := c.m.Load(topic)
	if !ok {
		return nil, false
	}
	return v.([]string), true
}

func (c *ownersCache) put(topic string, ids []string) {
	if c.n.Add(1) > maxOwnersCached {
		c.n.Add(-1)
		return
	}
	if _, loaded := c.m.LoadOrStore(topic, ids); loaded {
		c.n.Add(-1)
	}
}
