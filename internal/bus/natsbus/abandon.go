package natsbus

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
)

// A request this host answered as lost (answerLost) may still be running on
// the host that held it: a host is taken as lost when NATS no longer
// reaches it, not when it stopped. So this host owes that host an
// abandonment: it keeps asking after the host (askAlive) and carries the
// abandoned requests in the liveness question itself; once the host is
// reached again and answers, it has cancelled them (Options.
// RequestsAbandoned) and the debt is paid. The question needs no subject or
// permission of its own, and only a host of the cluster can ask it.

// AbandonedRequest names a request that its requester answered as lost, for
// the host that was running it: the request's principal and correlation id
// (a tool call's id, which its handler binds as its cancel key).
type AbandonedRequest struct {
	Principal     string `json:"principal"`
	CorrelationID string `json:"correlation_id"`
}

// abandonSeqHeader numbers a liveness question that carries abandoned
// requests; the answer echoes it, so the asker knows which it delivered.
const abandonSeqHeader = "Astrid-Abandon-Seq"

// Bounds of what one host owes the others: how many abandoned requests,
// for how long (a host away longer has restarted, or its work has long
// ended), and how many travel in one question (the rest go next tick).
const (
	maxOwed         = 4096
	owedFor         = 10 * time.Minute
	maxPerQuestion  = 64
	maxAbandonBytes = 64 << 10
)

// owed is one abandoned request not yet delivered to its host.
type owed struct {
	req   AbandonedRequest
	until time.Time
	// seq is the last question that carried it; 0 until one did.
	seq uint64
}

// oweLocked records that host still runs the abandoned request r, if it
// may (r has an address and the debt's bounds hold). c.mu must be held.
func (c *inflight) oweLocked(host string, r AbandonedRequest, now time.Time) {
	if host == "" || r.CorrelationID == "" {
		return
	}
	if c.owed == nil {
		c.owed = make(map[string][]owed)
	}
	total := 0
	for h, list := range c.owed {
		list = slices.DeleteFunc(list, func(o owed) bool { return now.After(o.until) })
		if len(list) == 0 {
			delete(c.owed, h)
			continue
		}
		c.owed[h] = list
		total += len(list)
	}
	if total >= maxOwed {
		return
	}
	c.owed[host] = append(c.owed[host], owed{req: r, until: now.Add(owedFor)})
}

// abandonQuestion is the liveness question to host, carrying what this
// host owes it, if anything. Called by the announcing goroutine.
func (t *Transport) abandonQuestion(host string) *nats.Msg {
	msg := &nats.Msg{Subject: aliveSubject(host), Reply: hostInbox(t.opts.HostID) + ".alive." + host, Header: nats.Header{}}
	c := &t.requests
	c.mu.Lock()
	defer c.mu.Unlock()
	list := c.owed[host]
	if len(list) == 0 {
		return msg
	}
	c.seq++
	var reqs []AbandonedRequest
	for i := range list {
		if len(reqs) == maxPerQuestion {
			break
		}
		list[i].seq = c.seq
		reqs = append(reqs, list[i].req)
	}
	// Strings only: it always encodes.
	msg.Data, _ = json.Marshal(reqs)
	msg.Header.Set(abandonSeqHeader, strconv.FormatUint(c.seq, 10))
	return msg
}

// abandonDelivered forgets what host was owed up to the question seq,
// which host answered.
func (t *Transport) abandonDelivered(host string, seq uint64) {
	c := &t.requests
	c.mu.Lock()
	defer c.mu.Unlock()
	list := slices.DeleteFunc(c.owed[host], func(o owed) bool { return o.seq != 0 && o.seq <= seq })
	if len(list) == 0 {
		delete(c.owed, host)
	} else {
		c.owed[host] = list
	}
}

// owedHosts is the hosts this host still owes an abandonment.
func (c *inflight) owedHostsLocked() []string {
	hosts := make([]string, 0, len(c.owed))
	for h := range c.owed {
		hosts = append(hosts, h)
	}
	return hosts
}

// DecodeAbandoned reads the abandoned requests a liveness question
// carries. Only other hosts of the cluster can ask one, but what they send
// is still bounded and checked.
func DecodeAbandoned(data []byte) ([]AbandonedRequest, error) {
	if len(data) > maxAbandonBytes {
		return nil, fmt.Errorf("natsbus: abandoned requests: %d bytes, over the %d-byte limit", len(data), maxAbandonBytes)
	}
	var reqs []AbandonedRequest
	if err := json.Unmarshal(data, &reqs); err != nil {
		return nil, fmt.Errorf("natsbus: abandoned requests: %w", err)
	}
	if len(reqs) > maxPerQuestion {
		return nil, fmt.Errorf("natsbus: abandoned requests: %d in one question, over %d", len(reqs), maxPerQuestion)
	}
	for _, r := range reqs {
		if r.CorrelationID == "" {
			return nil, fmt.Errorf("natsbus: abandoned requests: one has no correlation id")
		}
	}
	return reqs, nil
}

// answerAlive answers a liveness question whose answer goes to a host's
// inbox, and nothing else: a host cannot make another publish anywhere
// but there. The abandoned requests the question carries are cancelled
// here first, so that the answer tells the asker they were.
func (t *Transport) answerAlive(m *nats.Msg) {
	asker := inboxAsker(m.Reply, "alive")
	if asker == "" {
		return
	}
	var answer []byte
	if seq := m.Header.Get(abandonSeqHeader); seq != "" {
		reqs, err := DecodeAbandoned(m.Data)
		if err != nil {
			t.log.Warn("natsbus: a liveness question carried abandoned requests this host cannot read", "asker", asker, "error", err)
			return
		}
		if t.opts.RequestsAbandoned != nil {
			t.opts.RequestsAbandoned(asker, reqs)
		}
		answer = []byte(seq)
	}
	_ = m.Respond(answer)
}
