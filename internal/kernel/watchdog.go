package kernel

import (
	"context"
	"sort"
	"time"

	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// startWatchdog publishes astrid.v1.watchdog.tick every interval until ctx
// ends: once for the default principal and once for every principal the
// CPU ledger has admitted work for, because a handler sees only the KV of
// the principal it runs for and the agent keeps each principal's turns in
// that principal's KV. Ticks are what enforce the agent's phase limits
// (a provider that never answers, a tool that never returns), so a turn
// whose every party fell silent still ends.
func (k *Kernel) startWatchdog(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		return
	}
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				k.tick()
			}
		}
	}()
}

// tickPayload is the tick's (empty) data, a custom payload.
var tickPayload = []byte(`{}`)

func (k *Kernel) tick() {
	for _, p := range k.tickPrincipals() {
		if _, err := k.Dispatcher.Publish(dispatch.Caller{Principal: p}, ipc.WatchdogTickTopic, tickPayload, dispatch.KernelTick); err != nil {
			k.log.Debug("watchdog tick not published", "principal", p, "err", err)
		}
	}
}

// tickPrincipals is the default principal and every principal the ledger
// knows, sorted.
func (k *Kernel) tickPrincipals() []string {
	seen := map[string]bool{ipc.DefaultPrincipal: true}
	out := []string{ipc.DefaultPrincipal}
	for p := range k.Ledger.Snapshot() {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Strings(out[1:])
	return out
}
