package handler

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// tracerName names the module's spans' instrumentation scope.
const tracerName = "github.com/caddy-a2a/caddy-a2a"

// traceContext is the W3C trace context propagated to the agent.
var traceContext propagation.TraceContext

// traceRun starts the spans of one agent call when the request that
// started it is traced (Caller.Span): "a2a.run" for the turn, a child of
// the request's span, and "a2a.upstream" for the call, whose W3C
// traceparent/tracestate go to the agent with the run's headers. Without
// a traced request it returns ctx and a no-op end, allocating nothing.
func (ru *run) traceRun(ctx context.Context) (context.Context, func(outcome RunOutcome)) {
	parent := ru.span
	if parent == nil || !parent.SpanContext().IsValid() {
		return ctx, func(RunOutcome) {}
	}
	tr := parent.TracerProvider().Tracer(tracerName)
	ctx, runSpan := tr.Start(trace.ContextWithSpan(ctx, parent), "a2a.run",
		trace.WithAttributes(attribute.String("a2a.task_id", ru.task.ID), attribute.String("a2a.context_id", ru.task.ContextID)))
	ctx, upSpan := tr.Start(ctx, "a2a.upstream", trace.WithSpanKind(trace.SpanKindClient))
	h := ru.req.Headers.Clone()
	if h == nil {
		h = http.Header{}
	}
	traceContext.Inject(ctx, propagation.HeaderCarrier(h))
	ru.req.Headers = h
	return ctx, func(outcome RunOutcome) {
		upSpan.SetAttributes(attribute.String("a2a.outcome", string(outcome)))
		upSpan.End()
		runSpan.End()
	}
}
