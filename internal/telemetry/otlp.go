package telemetry

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// otlpExporter sends spans to an OTLP/HTTP collector in OTLP's JSON
// encoding (Content-Type application/json, which every OTLP/HTTP receiver
// accepts). It is ours rather than the SDK's otlptracehttp because that
// one links gRPC and protobuf into the binary (≈ 18 MB of a 62 MB astrid)
// for a transport the kernel does not use (docs/rationale/observability.md: "Why is the
// OTLP exporter our own?"). One attempt per batch, bounded by the export's
// context and exportTimeout: a collector that is down loses that batch.
type otlpExporter struct {
	url    string
	client *http.Client
}

func newOTLPExporter(url string) *otlpExporter {
	return &otlpExporter{url: url, client: &http.Client{Timeout: exportTimeout}}
}

// ExportSpans posts spans as one ExportTraceServiceRequest.
func (x *otlpExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	body, err := json.Marshal(otlpRequest(spans))
	if err != nil {
		return fmt.Errorf("otlp: encode: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, x.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("otlp: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := x.client.Do(req)
	if err != nil {
		return fmt.Errorf("otlp: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("otlp: the collector at %s answered %s", x.url, resp.Status)
	}
	return nil
}

// Shutdown has nothing to release.
func (x *otlpExporter) Shutdown(context.Context) error {
	x.client.CloseIdleConnections()
	return nil
}

// The OTLP JSON encoding (opentelemetry-proto's JSON mapping: ids in hex,
// 64-bit integers as strings, enums as numbers).
type (
	otlpTraces struct {
		ResourceSpans []otlpResourceSpans `json:"resourceSpans"`
	}
	otlpResourceSpans struct {
		Resource   otlpResource     `json:"resource"`
		ScopeSpans []otlpScopeSpans `json:"scopeSpans"`
	}
	otlpResource struct {
		Attributes []otlpKeyValue `json:"attributes"`
	}
	otlpScopeSpans struct {
		Scope otlpScope  `json:"scope"`
		Spans []otlpSpan `json:"spans"`
	}
	otlpScope struct {
		Name    string `json:"name"`
		Version string `json:"version,omitempty"`
	}
	otlpSpan struct {
		TraceID      string         `json:"traceId"`
		SpanID       string         `json:"spanId"`
		ParentSpanID string         `json:"parentSpanId,omitempty"`
		Name         string         `json:"name"`
		Kind         int            `json:"kind"`
		Start        string         `json:"startTimeUnixNano"`
		End          string         `json:"endTimeUnixNano"`
		Attributes   []otlpKeyValue `json:"attributes,omitempty"`
		Status       *otlpStatus    `json:"status,omitempty"`
	}
	otlpKeyValue struct {
		Key   string    `json:"key"`
		Value otlpValue `json:"value"`
	}
	otlpValue struct {
		String *string  `json:"stringValue,omitempty"`
		Bool   *bool    `json:"boolValue,omitempty"`
		Int    *string  `json:"intValue,omitempty"`
		Double *float64 `json:"doubleValue,omitempty"`
	}
	otlpStatus struct {
		Code    int    `json:"code"`
		Message string `json:"message,omitempty"`
	}
)

// otlpRequest groups spans by resource and scope (the kernel has one of
// each, so in practice one group).
func otlpRequest(spans []sdktrace.ReadOnlySpan) otlpTraces {
	var out otlpTraces
	resources := map[string]int{} // resource → index in out.ResourceSpans
	scopes := map[[2]string]int{} // (resource, scope) → index in its ScopeSpans
	for _, s := range spans {
		res := s.Resource()
		rk := res.Encoded(attribute.DefaultEncoder())
		ri, ok := resources[rk]
		if !ok {
			out.ResourceSpans = append(out.ResourceSpans, otlpResourceSpans{Resource: otlpResource{Attributes: otlpAttrs(res.Attributes())}})
			ri = len(out.ResourceSpans) - 1
			resources[rk] = ri
		}
		rs := &out.ResourceSpans[ri]
		lib := s.InstrumentationScope()
		sk := [2]string{rk, lib.Name + "\x00" + lib.Version}
		si, ok := scopes[sk]
		if !ok {
			rs.ScopeSpans = append(rs.ScopeSpans, otlpScopeSpans{Scope: otlpScope{Name: lib.Name, Version: lib.Version}})
			si = len(rs.ScopeSpans) - 1
			scopes[sk] = si
		}
		rs.ScopeSpans[si].Spans = append(rs.ScopeSpans[si].Spans, otlpSpanOf(s))
	}
	return out
}

func otlpSpanOf(s sdktrace.ReadOnlySpan) otlpSpan {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	o := otlpSpan{
		TraceID: hex.EncodeToString(tid[:]), SpanID: hex.EncodeToString(sid[:]), Name: s.Name(),
		Kind:  otlpKind(s.SpanKind()),
		Start: strconv.FormatInt(s.StartTime().UnixNano(), 10), End: strconv.FormatInt(s.EndTime().UnixNano(), 10),
		Attributes: otlpAttrs(s.Attributes()),
	}
	if psid := s.Parent().SpanID(); psid.IsValid() {
		o.ParentSpanID = hex.EncodeToString(psid[:])
	}
	switch st := s.Status(); st.Code {
	case codes.Error:
		o.Status = &otlpStatus{Code: 2, Message: st.Description}
	case codes.Ok:
		o.Status = &otlpStatus{Code: 1}
	}
	return o
}

// otlpKind maps the API's span kinds (Internal = 1 …) to OTLP's, which
// number them the same way.
func otlpKind(k trace.SpanKind) int {
	if k == trace.SpanKindUnspecified {
		return int(trace.SpanKindInternal)
	}
	return int(k)
}

func otlpAttrs(attrs []attribute.KeyValue) []otlpKeyValue {
	out := make([]otlpKeyValue, 0, len(attrs))
	for _, a := range attrs {
		var v otlpValue
		switch a.Value.Type() {
		case attribute.BOOL:
			b := a.Value.AsBool()
			v.Bool = &b
		case attribute.INT64:
			i := strconv.FormatInt(a.Value.AsInt64(), 10)
			v.Int = &i
		case attribute.FLOAT64:
			f := a.Value.AsFloat64()
			v.Double = &f
		default:
			str := a.Value.String()
			v.String = &str
		}
		out = append(out, otlpKeyValue{Key: string(a.Key), Value: v})
	}
	return out
}
