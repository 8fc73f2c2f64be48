// Package metrics owns the kernel's Prometheus metrics (docs/observability.md
// names each): the counters the bus and the dispatcher already keep, read at
// scrape time; queue depths; CPU, calls and published bytes per principal;
// call latency per capsule handler and per tool; provider tokens.
//
// Mounting it is one line where the daemon's admin server builds its mux:
//
//	mux.Handle("/metrics", metrics.New(k)) // k is the *kernel.Kernel
//
// New installs a dispatch.Observer on the kernel for what no counter keeps
// (latency histograms, bytes per principal, tokens) and returns the
// handler; everything else is read from bus.Stats, dispatch.Stats, the CPU
// ledger and the dispatcher's queues when Prometheus scrapes, so a kernel
// whose metrics are never scraped does no more work than that observer's.
//
// It must not: serve anything itself (no listener, no auth: the admin
// server that mounts the handler owns both), register in Prometheus's global
// registry (two kernels in one process would collide), or let a capsule grow
// a label set without bound (principals and capsules are the kernel's own;
// deny reasons are capped by dispatch; tool and provider names come from
// topics, which a capsule can only publish on as its manifest allows).
package metrics
