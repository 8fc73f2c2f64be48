package metrics

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/astrid-go/astrid/internal/dispatch"
	"github.com/astrid-go/astrid/ipc"
)

// callBuckets are the latency buckets of calls, in seconds: from a native
// handler's few microseconds to a model's minutes.
var callBuckets = []float64{
	0.00001, 0.00005, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300,
}

// recorder is the dispatch.Observer for what no counter of the kernel's
// keeps: call latencies, bytes per principal, provider tokens, turn costs. Its hot
// path (every publish, every call) does a lookup in a copy-on-write map
// (no lock, no allocation once the label set was seen) and an atomic add.
type recorder struct {
	calls  *prometheus.HistogramVec // capsule, handler
	tools  *prometheus.HistogramVec // tool
	bytes  *prometheus.CounterVec   // principal
	tokens *prometheus.CounterVec   // provider, kind
	cost   *prometheus.CounterVec   // provider

	callObs      cow[callKey, prometheus.Observer]
	toolObs      cow[string, prometheus.Observer]
	principalCnt cow[string, prometheus.Counter]
}

type callKey struct{ capsule, handler string }

func newRecorder() *recorder {
	return &recorder{
		calls: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "capsule_call_duration_seconds",
			Help:    "Time an interceptor call took, by capsule and handler (queue wait excluded).",
			Buckets: callBuckets,
		}, []string{labelCapsule, labelHandler}),
		tools: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "tool_call_duration_seconds",
			Help:    "Time a tool's providing capsule spent on a call (its handler on tool.v1.execute.<tool>), by tool.",
			Buckets: callBuckets,
		}, []string{labelTool}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "principal_published_bytes_total",
			Help: "Envelope bytes (ipc.Envelope.Size) published for a principal; the system's events under principal \"\".",
		}, []string{labelPrincipal}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "provider_tokens_total",
			Help: "Tokens LLM providers reported in their streams' Usage events, by provider and kind (input, output, cached: the input tokens read from the provider's prompt cache, also counted in input).",
		}, []string{labelProvider, labelKind}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "turn_cost_usd_total",
			Help: "The cost in US dollars of the agent's turns that had a price (react's [env] prices), from their final responses, by provider.",
		}, []string{labelProvider}),
	}
}

func (r *recorder) collectors() []prometheus.Collector {
	return []prometheus.Collector{r.calls, r.tools, r.bytes, r.tokens, r.cost}
}

var _ dispatch.Observer = (*recorder)(nil)

var llmStreamPrefix = ipc.LLMStreamTopic("")

// Publishing counts the envelope's bytes for its principal, and a
// provider's token usage.
func (r *recorder) Publishing(e *ipc.Envelope) {
	r.principalCnt.get(e.Principal, func() prometheus.Counter { return r.bytes.WithLabelValues(e.Principal) }).Add(float64(e.Size()))
	if provider, ok := strings.CutPrefix(e.Topic, llmStreamPrefix); ok && bytes.Contains(e.Payload, []byte(`"Usage"`)) {
		r.countTokens(provider, e.Payload)
	} else if e.Topic == ipc.AgentResponseTopic && bytes.Contains(e.Payload, []byte(`"cost_usd"`)) {
		r.countCost(e.Payload)
	}
}

// countCost adds a final response's cost (a turn ends in exactly one).
func (r *recorder) countCost(payload []byte) {
	var resp struct {
		Provider string   `json:"provider"`
		CostUSD  *float64 `json:"cost_usd"`
	}
	if json.Unmarshal(payload, &resp) != nil || resp.CostUSD == nil || !(*resp.CostUSD >= 0) || math.IsInf(*resp.CostUSD, 0) {
		return
	}
	r.cost.WithLabelValues(resp.Provider).Add(*resp.CostUSD)
}

func (r *recorder) countTokens(provider string, payload []byte) {
	var ev struct {
		Event struct {
			Usage *ipc.Usage `json:"Usage"`
		} `json:"event"`
	}
	if json.Unmarshal(payload, &ev) != nil || ev.Event.Usage == nil {
		return
	}
	r.tokens.WithLabelValues(provider, "input").Add(float64(ev.Event.Usage.InputTokens))
	r.tokens.WithLabelValues(provider, "output").Add(float64(ev.Event.Usage.OutputTokens))
	r.tokens.WithLabelValues(provider, "cached").Add(float64(ev.Event.Usage.CachedTokens))
}

// Invoking changes nothing: the dispatcher times the call.
func (r *recorder) Invoking(ctx context.Context, inv dispatch.Invocation) context.Context { return ctx }

// Invoked records the call's latency, and a tool's.
func (r *recorder) Invoked(ctx context.Context, inv dispatch.Invocation, took time.Duration, v dispatch.Verdict, err error) {
	secs := took.Seconds()
	key := callKey{inv.Capsule, inv.Handler}
	r.callObs.get(key, func() prometheus.Observer { return r.calls.WithLabelValues(inv.Capsule, inv.Handler) }).Observe(secs)
	if tool, ok := ipc.ToolNameFromExecuteTopic(inv.Envelope.Topic); ok {
		r.toolObs.get(tool, func() prometheus.Observer { return r.tools.WithLabelValues(tool) }).Observe(secs)
	}
}

// cow is a copy-on-write map read without a lock: metrics' label sets
// settle quickly (capsules, handlers, principals), after which every lookup
// is a plain map read.
type cow[K comparable, V any] struct {
	m  atomic.Pointer[map[K]V]
	mu sync.Mutex
}

// get returns the value under k, making it with mk the first time.
func (c *cow[K, V]) get(k K, mk func() V) V {
	if m := c.m.Load(); m != nil {
		if v, ok := (*m)[k]; ok {
			return v
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	if old != nil {
		if v, ok := (*old)[k]; ok {
			return v
		}
	}
	next := make(map[K]V, 1)
	if old != nil {
		for key, v := range *old {
			next[key] = v
		}
	}
	v := mk()
	next[k] = v
	c.m.Store(&next)
	return v
}
