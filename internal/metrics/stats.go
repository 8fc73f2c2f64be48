package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/astrid-go/astrid/internal/bus"
	"github.com/astrid-go/astrid/internal/bus/natsbus"
	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/internal/ledger"
)

// source is what the stats collector reads at scrape time; *kernel.Kernel
// provides it (kernelSource).
type source interface {
	busStats() bus.Stats
	dispatchStats() dispatch.Stats
	ledger() map[string]ledger.Usage
	// queued is the interceptor calls waiting, per capsule.
	queued() map[string]int
	// nats is the transport's counters across hosts; nil when the bus
	// stays on this host.
	nats() *natsbus.Stats
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(namespace, "", name), help, labels, nil)
}

// statsCollector turns the kernel's own counters into metrics when scraped:
// nothing is added to the publish path for them (docs/rationale/observability.md).
type statsCollector struct {
	src source

	published, delivered, busDropped               *prometheus.Desc
	routes, rings, routeMsgs, routeBytes           *prometheus.Desc
	refused, dispatchDropped, invocations          *prometheus.Desc
	verdicts, denials, dropsAnswered               *prometheus.Desc
	queuedCalls                                    *prometheus.Desc
	principalCPU, principalCalls, principalRefused *prometheus.Desc
	natsDropped, natsRoutes, natsClientsRefused    *prometheus.Desc
	natsViolations                                 *prometheus.Desc
}

func newStatsCollector(src source) *statsCollector {
	return &statsCollector{
		src:                src,
		published:          desc("bus_published_total", "Envelopes the bus admitted."),
		delivered:          desc("bus_delivered_total", "Envelopes handed to subscription routes' receivers."),
		busDropped:         desc("bus_dropped_total", "Envelopes the bus did not deliver, by reason: too_large (refused at publish), unrouted (no route took it), evicted (a route over its byte budget), route_closed (still queued when its route closed), lagged (overwritten in an observer ring).", labelReason),
		routes:             desc("bus_routes", "Open subscription routes."),
		rings:              desc("bus_observer_rings", "Open observer rings."),
		routeMsgs:          desc("bus_queued_messages", "Envelopes queued in subscription routes, by the route's owner.", labelOwner),
		routeBytes:         desc("bus_queued_bytes", "Bytes queued in subscription routes, by the route's owner.", labelOwner),
		refused:            desc("dispatch_refused_total", "Publishes and subscriptions the dispatcher refused, by reason: publish_denied, subscribe_denied (ACL), rate_limited, not_admitted (CPU budget), too_large, invalid.", labelReason),
		dispatchDropped:    desc("dispatch_dropped_total", "Interceptor calls never made, by reason: queue_full, orphaned (capsule gone), discarded (unregister or close), chain_cut (chains ended early).", labelReason),
		dropsAnswered:      desc("dispatch_drops_answered_total", "Queue-full drops whose caller was answered at once."),
		invocations:        desc("dispatch_invocations_total", "Interceptor calls made."),
		verdicts:           desc("dispatch_verdicts_total", "Interceptor answers, by verdict: continue, final, deny (errors included), error, skipped.", labelVerdict),
		denials:            desc("dispatch_denials_total", "Deny answers by reason (at most 64 distinct, the rest as \"(other)\"; an error counts as \"error\").", labelReason),
		queuedCalls:        desc("dispatch_queued_calls", "Interceptor calls waiting in a capsule's queues.", labelCapsule),
		principalCPU:       desc("principal_cpu_seconds_total", "Guest CPU time charged to a principal.", labelPrincipal),
		principalCalls:     desc("principal_calls_total", "Calls charged to a principal.", labelPrincipal),
		principalRefused:   desc("principal_refused_total", "Calls refused because the principal was over its CPU budget.", labelPrincipal),
		natsDropped:        desc("nats_dropped_total", "Envelopes the NATS transport did not carry or hand over, by reason (docs/nats.md, Counting).", labelReason),
		natsRoutes:         desc("nats_routes_total", "Route connections peers opened to this host's embedded NATS node, by outcome: joined, refused (no cluster secret, a wrong one, no certificate of the cluster's CA).", labelOutcome),
		natsClientsRefused: desc("nats_clients_refused_total", "Client connections the embedded NATS node refused (its only clients are the daemon's own)."),
		natsViolations:     desc("nats_permission_violations_total", "Permissions violations the embedded NATS node reported of its clients."),
	}
}

func (c *statsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		c.published, c.delivered, c.busDropped, c.routes, c.rings, c.routeMsgs, c.routeBytes,
		c.refused, c.dispatchDropped, c.dropsAnswered, c.invocations, c.verdicts, c.denials, c.queuedCalls,
		c.principalCPU, c.principalCalls, c.principalRefused,
		c.natsDropped, c.natsRoutes, c.natsClientsRefused, c.natsViolations,
	} {
		ch <- d
	}
}

func (c *statsCollector) Collect(ch chan<- prometheus.Metric) {
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v int, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}

	b := c.src.busStats()
	counter(c.published, b.Published)
	counter(c.delivered, b.Delivered)
	counter(c.busDropped, b.Rejected, "too_large")
	counter(c.busDropped, b.Unrouted, "unrouted")
	counter(c.busDropped, b.Evicted, "evicted")
	counter(c.busDropped, b.DroppedOnClose, "route_closed")
	counter(c.busDropped, b.Lagged, "lagged")
	gauge(c.routes, len(b.Routes))
	gauge(c.rings, b.Rings)
	type queued struct{ msgs, bytes int }
	byOwner := map[string]queued{}
	for _, r := range b.Routes {
		q := byOwner[r.Owner]
		q.msgs += r.QueuedMessages
		q.bytes += r.QueuedBytes
		byOwner[r.Owner] = q
	}
	for owner, q := range byOwner {
		gauge(c.routeMsgs, q.msgs, owner)
		gauge(c.routeBytes, q.bytes, owner)
	}

	d := c.src.dispatchStats()
	counter(c.refused, d.PublishDenied, "publish_denied")
	counter(c.refused, d.SubscribeDenied, "subscribe_denied")
	counter(c.refused, d.RateLimited, "rate_limited")
	counter(c.refused, d.NotAdmitted, "not_admitted")
	counter(c.refused, d.TooLarge, "too_large")
	counter(c.refused, d.Invalid, "invalid")
	counter(c.dispatchDropped, d.QueueDrops, "queue_full")
	counter(c.dispatchDropped, d.Orphaned, "orphaned")
	counter(c.dispatchDropped, d.Discarded, "discarded")
	counter(c.dispatchDropped, d.ChainsCut, "chain_cut")
	counter(c.dropsAnswered, d.DropsAnswered)
	counter(c.invocations, d.Invocations)
	counter(c.verdicts, d.Continued, "continue")
	counter(c.verdicts, d.Finals, "final")
	counter(c.verdicts, d.Denials, "deny")
	counter(c.verdicts, d.Errors, "error")
	counter(c.verdicts, d.Skipped, "skipped")
	for reason, n := range d.DenialsByReason {
		counter(c.denials, n, reason)
	}
	for id, n := range c.src.queued() {
		gauge(c.queuedCalls, n, id)
	}

	if n := c.src.nats(); n != nil {
		for reason, v := range n.Drops {
			counter(c.natsDropped, v, reason)
		}
		if nd := n.Node; nd != nil {
			counter(c.natsRoutes, nd.RoutesJoined, "joined")
			counter(c.natsRoutes, nd.RoutesRefused, "refused")
			counter(c.natsClientsRefused, nd.ClientsRefused)
			counter(c.natsViolations, nd.Violations)
		}
	}

	for p, u := range c.src.ledger() {
		ch <- prometheus.MustNewConstMetric(c.principalCPU, prometheus.CounterValue, u.CPU.Seconds(), p)
		counter(c.principalCalls, u.Calls, p)
		counter(c.principalRefused, u.Refused, p)
	}
}
