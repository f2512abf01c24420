package handler

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/caddy-a2a/caddy-a2a/upstream"
)

// tracerName names the module's spans' instrumentation scope.
const tracerName = "github.com/caddy-a2a/caddy-a2a"

// traceContext is the W3C trace context propagated to the agent.
var traceContext propagation.TraceContext

// traceRun starts the spans of one agent call when the request that
// started it is traced (parent, the request's span): "a2a.run" for the
// turn (or the message reply), a child of parent, and "a2a.upstream" for
// the call, whose W3C traceparent/tracestate go to the agent with req's
// headers. The run span carries taskID (when not empty) and contextID.
// Without a traced request it returns ctx and a no-op end, allocating
// nothing: the attributes are made only here, past that test (a variadic
// of them at the call site cost every send an allocation,
// BenchmarkServeSend).
func traceRun(ctx context.Context, parent trace.Span, req *upstream.RunRequest, taskID, contextID string) (context.Context, func(outcome RunOutcome)) {
	if parent == nil || !parent.SpanContext().IsValid() {
		return ctx, func(RunOutcome) {}
	}
	attrs := []attribute.KeyValue{attribute.String("a2a.context_id", contextID)}
	if taskID != "" {
		attrs = append(attrs, attribute.String("a2a.task_id", taskID))
	}
	tr := parent.TracerProvider().Tracer(tracerName)
	ctx, runSpan := tr.Start(trace.ContextWithSpan(ctx, parent), "a2a.run", trace.WithAttributes(attrs...))
	ctx, upSpan := tr.Start(ctx, "a2a.upstream", trace.WithSpanKind(trace.SpanKindClient))
	h := req.Headers.Clone()
	if h == nil {
		h = http.Header{}
	}
	traceContext.Inject(ctx, propagation.HeaderCarrier(h))
	req.Headers = h
	return ctx, func(outcome RunOutcome) {
		upSpan.SetAttributes(attribute.String("a2a.outcome", string(outcome)))
		upSpan.End()
		runSpan.End()
	}
}
