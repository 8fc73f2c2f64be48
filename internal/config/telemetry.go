package config

import (
	"net/url"
	"strings"
)

// Telemetry configures what the kernel shows of itself to an operator's
// tools (docs/observability.md): OpenTelemetry traces of agent turns, and
// whether the daemon's admin endpoint serves Prometheus metrics. Both are
// off by default.
type Telemetry struct {
	// Tracing is the trace exporter: "off" (the default; no span is
	// made), "stdout" (one JSON document per span, to TraceFile or the
	// process's standard output) or "otlp" (OTLP over HTTP to
	// OTLPEndpoint).
	Tracing string `toml:"tracing"`
	// OTLPEndpoint is the OTLP/HTTP collector's base URL; traces go to
	// its /v1/traces. An http:// URL is sent without TLS.
	OTLPEndpoint string `toml:"otlp_endpoint"`
	// TraceFile, for tracing = "stdout", is where the spans are written
	// instead of standard output (a path relative to $ASTRID_HOME, or
	// absolute); appended to.
	TraceFile string `toml:"trace_file"`
	// Metrics makes the daemon's admin endpoint serve /metrics.
	Metrics bool `toml:"metrics"`
}

// The exporters Telemetry.Tracing names.
const (
	TracingOff    = "off"
	TracingStdout = "stdout"
	TracingOTLP   = "otlp"
)

func defaultTelemetry() Telemetry {
	return Telemetry{Tracing: TracingOff, OTLPEndpoint: "http://localhost:4318"}
}

// validate reports the keys Load cannot take as they are.
func (t Telemetry) validate(bad func(key, format string, args ...any)) {
	switch strings.ToLower(t.Tracing) {
	case TracingOff, TracingStdout, TracingOTLP:
	default:
		bad("telemetry.tracing", "unknown exporter %q; use off, stdout or otlp", t.Tracing)
	}
	if strings.EqualFold(t.Tracing, TracingOTLP) {
		u, err := url.Parse(t.OTLPEndpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("telemetry.otlp_endpoint", "%q is not an http:// or https:// URL with a host", t.OTLPEndpoint)
		}
	}
}
