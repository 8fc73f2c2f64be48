package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/astrid-go/astrid/internal/config"
)

// exportTimeout bounds one export: a collector that does not answer within
// it loses that batch, and a kernel's shutdown never waits longer on it.
const exportTimeout = 5 * time.Second

// Tracer makes the spans of agent turns (doc.go). Its methods are safe for
// concurrent use; it is a dispatch.Observer.
type Tracer struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
	log      *slog.Logger
	out      io.Closer // the trace file, if any

	pairs pairs
	// defer_ says invocation spans are made at export time (a batching
	// exporter); without it (NewWithExporter) they are made at once.
	defer_   bool
	deferred deferred

	shutdown sync.Once
	err      error
}

// New builds the tracer cfg asks for, or returns nil when tracing is off.
// home resolves a relative trace file. The exporter starts lazily: an OTLP
// collector that is not there yet costs a warning in the log, never a
// failed boot.
func New(cfg config.Telemetry, home string, log *slog.Logger) (*Tracer, error) {
	if log == nil {
		log = slog.Default()
	}
	var (
		exp sdktrace.SpanExporter
		out io.Closer
		err error
	)
	switch strings.ToLower(cfg.Tracing) {
	case "", config.TracingOff:
		return nil, nil
	case config.TracingStdout:
		var w io.Writer = os.Stdout
		if cfg.TraceFile != "" {
			path := cfg.TraceFile
			if !filepath.IsAbs(path) {
				path = filepath.Join(home, path)
			}
			f, ferr := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
			if ferr != nil {
				return nil, fmt.Errorf("telemetry: trace file: %w", ferr)
			}
			w, out = f, f
		}
		exp, err = stdouttrace.New(stdouttrace.WithWriter(w))
	case config.TracingOTLP:
		var endpoint string
		endpoint, err = tracesURL(cfg.OTLPEndpoint)
		if err == nil {
			exp = newOTLPExporter(endpoint)
		}
	default:
		return nil, fmt.Errorf("telemetry: unknown tracing exporter %q", cfg.Tracing)
	}
	if err != nil {
		if out != nil {
			_ = out.Close()
		}
		return nil, fmt.Errorf("telemetry: %s exporter: %w", cfg.Tracing, err)
	}
	b := newBatcher(exp, log)
	t := newTracer(sdktrace.WithSpanProcessor(b), log)
	t.out, t.defer_ = out, true
	b.prepare = t.materialize
	return t, nil
}

// NewWithExporter is a tracer that hands every ended span to exp at once
// (tests, and a caller with its own exporter).
func NewWithExporter(exp sdktrace.SpanExporter, log *slog.Logger) *Tracer {
	if log == nil {
		log = slog.Default()
	}
	return newTracer(sdktrace.WithSyncer(exp), log)
}

func newTracer(export sdktrace.TracerProviderOption, log *slog.Logger) *Tracer {
	tp := sdktrace.NewTracerProvider(
		export,
		// Every turn is traced: an operator who turned tracing on wants
		// to see them; a collector samples further if it must.
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "astrid"))),
		sdktrace.WithIDGenerator(idGenerator{}),
	)
	t := &Tracer{provider: tp, tracer: tp.Tracer(instrumentation), log: log}
	t.pairs.init()
	return t
}

// tracesURL is the OTLP/HTTP traces URL of a collector's base URL: its
// path, or /v1/traces when it has none.
func tracesURL(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("otlp_endpoint %q is not an http:// or https:// URL with a host", base)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	return u.String(), nil
}

// Shutdown ends the spans still open (as abandoned: the kernel is
// stopping), flushes what the exporter holds and closes it; ctx bounds the
// flush. It is idempotent.
func (t *Tracer) Shutdown(ctx context.Context) error {
	t.shutdown.Do(func() {
		t.pairs.endAll("the kernel stopped")
		// Made before the provider shuts down: a span started after
		// that would not record.
		t.materialize()
		err := t.provider.Shutdown(ctx)
		if t.out != nil {
			err = errors.Join(err, t.out.Close())
		}
		t.err = err
	})
	return t.err
}
