package caddya2a

import (
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/protocol"
	"github.com/caddy-a2a/caddy-a2a/push"
)

// The collectors a mount registers in the registry Caddy gives the config
// (its metrics directive or admin endpoint expose them), shared by every
// mount of the config: the first registers each, the others reuse it.
// Labels are bounded sets: no task ids, no owners.
var (
	tasksTotalOpts = prometheus.CounterOpts{Namespace: "caddy", Subsystem: "a2a", Name: "tasks_total",
		Help: "Transitions of A2A tasks into each state."}
	runsInFlightOpts = prometheus.GaugeOpts{Namespace: "caddy", Subsystem: "a2a", Name: "runs_in_flight",
		Help: "Agent calls running now."}
	streamsOpenOpts = prometheus.GaugeOpts{Namespace: "caddy", Subsystem: "a2a", Name: "streams_open",
		Help: "A2A streams being served now."}
	upstreamDurationOpts = prometheus.HistogramOpts{Namespace: "caddy", Subsystem: "a2a", Name: "upstream_duration_seconds",
		Help:    "Duration of agent calls, by upstream kind and outcome.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}}
	upstreamErrorsOpts = prometheus.CounterOpts{Namespace: "caddy", Subsystem: "a2a", Name: "upstream_errors_total",
		Help: "Agent calls that did not end well, by upstream kind and reason (refused, timeout, canceled, error)."}
)

// metricStates are the task states a task can enter, each a label value.
var metricStates = []protocol.TaskState{protocol.StateSubmitted, protocol.StateWorking, protocol.StateInputRequired,
	protocol.StateAuthRequired, protocol.StateCompleted, protocol.StateCanceled, protocol.StateFailed, protocol.StateRejected}

// runOutcomes are the outcome label values.
var runOutcomes = []handler.RunOutcome{handler.RunOK, handler.RunRefused, handler.RunTimeout, handler.RunCanceled, handler.RunError}

// mountMetrics is a mount's handler.Observer over the config's
// collectors, with every label set resolved when the config loads so that
// an event costs no allocation.
type mountMetrics struct {
	states   [protocol.StateAuthRequired + 1]prometheus.Counter
	runs     prometheus.Gauge
	streams  prometheus.Gauge
	duration map[handler.RunOutcome]prometheus.Observer
	errors   map[handler.RunOutcome]prometheus.Counter
}

// newMountMetrics registers (or finds) the collectors in reg and resolves
// the labels of an upstream of kind.
func newMountMetrics(reg prometheus.Registerer, kind string) (*mountMetrics, error) {
	tasks, err := register(reg, prometheus.NewCounterVec(tasksTotalOpts, []string{"state"}))
	if err != nil {
		return nil, err
	}
	runs, err := register(reg, prometheus.NewGauge(runsInFlightOpts))
	if err != nil {
		return nil, err
	}
	streams, err := register(reg, prometheus.NewGauge(streamsOpenOpts))
	if err != nil {
		return nil, err
	}
	dur, err := register(reg, prometheus.NewHistogramVec(upstreamDurationOpts, []string{"kind", "outcome"}))
	if err != nil {
		return nil, err
	}
	errs, err := register(reg, prometheus.NewCounterVec(upstreamErrorsOpts, []string{"kind", "reason"}))
	if err != nil {
		return nil, err
	}
	m := &mountMetrics{runs: runs, streams: streams,
		duration: map[handler.RunOutcome]prometheus.Observer{}, errors: map[handler.RunOutcome]prometheus.Counter{}}
	for _, s := range metricStates {
		m.states[s] = tasks.WithLabelValues(s.String())
	}
	for _, o := range runOutcomes {
		m.duration[o] = dur.WithLabelValues(kind, string(o))
		if o != handler.RunOK {
			m.errors[o] = errs.WithLabelValues(kind, string(o))
		}
	}
	return m, nil
}

// register registers c in reg, or returns the collector of that name
// another mount of the config registered.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return c, err
		}
		existing, ok := are.ExistingCollector.(C)
		if !ok {
			return c, errors.New("a2a metrics: a collector of another type is registered under the same name")
		}
		return existing, nil
	}
	return c, nil
}

// TaskState implements handler.Observer.
func (m *mountMetrics) TaskState(s protocol.TaskState) {
	if s >= 0 && int(s) < len(m.states) && m.states[s] != nil {
		m.states[s].Inc()
	}
}

// RunStarted implements handler.Observer.
func (m *mountMetrics) RunStarted() { m.runs.Inc() }

// RunEnded implements handler.Observer.
func (m *mountMetrics) RunEnded(d time.Duration, o handler.RunOutcome) {
	m.runs.Dec()
	if h := m.duration[o]; h != nil {
		h.Observe(d.Seconds())
	}
	if c := m.errors[o]; c != nil {
		c.Inc()
	}
}

// StreamOpened implements handler.Observer.
func (m *mountMetrics) StreamOpened() { m.streams.Inc() }

// StreamClosed implements handler.Observer.
func (m *mountMetrics) StreamClosed() { m.streams.Dec() }

var _ handler.Observer = (*mountMetrics)(nil)

// The bindings, as the binding label names them.
const (
	bindingJSONRPC = iota
	bindingREST
	bindingGRPC
	numBindings
)

var bindingNames = [numBindings]string{"jsonrpc", "rest", "grpc"}

// codeLabels are the error codes requests_total tells apart (0: none);
// any other is "other". A bounded set, as a label must be.
var codeLabels = []int{0, protocol.CodeParseError, protocol.CodeInvalidRequest, protocol.CodeMethodNotFound,
	protocol.CodeInvalidParams, protocol.CodeInternal, protocol.CodeTaskNotFound, protocol.CodeTaskNotCancelable,
	protocol.CodePushNotSupported, protocol.CodeUnsupportedOperation, protocol.CodeContentTypeNotSupported,
	protocol.CodeInvalidAgentResponse, protocol.CodeExtendedCardNotConfigured, protocol.CodeExtensionSupportRequired,
	protocol.CodeVersionNotSupported, protocol.CodeResourceExhausted, protocol.CodeUnauthenticated}

func codeIndex(code int) int {
	for i, c := range codeLabels {
		if c == code {
			return i
		}
	}
	return len(codeLabels) // other
}

var (
	requestsTotalOpts = prometheus.CounterOpts{Namespace: "caddy", Subsystem: "a2a", Name: "requests_total",
		Help: "A2A requests by server, operation, wire version, binding and A2A error code (0: none)."}
	requestDurationOpts = prometheus.HistogramOpts{Namespace: "caddy", Subsystem: "a2a", Name: "request_duration_seconds",
		Help:    "Time to answer an A2A request (for a stream, to set it up), by server, operation and binding.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}}
	sendsDeduplicatedOpts = prometheus.CounterOpts{Namespace: "caddy", Subsystem: "a2a", Name: "sends_deduplicated_total",
		Help: "Sends answered from the task of an earlier send of the same message under the same messageId (exactly-once sends), without calling the agent, by server."}
)

// requestMetrics counts a mount's requests. Each label set's counter is
// made the first time it is seen and kept, so a request costs no
// allocation after that.
type requestMetrics struct {
	total    *prometheus.CounterVec
	server   string
	counters [numBindings][protocol.V10 + 1][protocol.NumMethods][]atomic.Pointer[prometheus.Counter]
	duration [numBindings][protocol.NumMethods]prometheus.Observer
	// deduplicated counts the sends answered as retries.
	deduplicated prometheus.Counter
}

func newRequestMetrics(reg prometheus.Registerer, server string) (*requestMetrics, error) {
	total, err := register(reg, prometheus.NewCounterVec(requestsTotalOpts, []string{"server", "method", "version", "binding", "code"}))
	if err != nil {
		return nil, err
	}
	dur, err := register(reg, prometheus.NewHistogramVec(requestDurationOpts, []string{"server", "method", "binding"}))
	if err != nil {
		return nil, err
	}
	dedup, err := register(reg, prometheus.NewCounterVec(sendsDeduplicatedOpts, []string{"server"}))
	if err != nil {
		return nil, err
	}
	m := &requestMetrics{total: total, server: server, deduplicated: dedup.WithLabelValues(server)}
	for b := range numBindings {
		for v := range m.counters[b] {
			for op := range m.counters[b][v] {
				m.counters[b][v][op] = make([]atomic.Pointer[prometheus.Counter], len(codeLabels)+1)
			}
		}
		for op := range protocol.NumMethods {
			m.duration[b][op] = dur.WithLabelValues(server, protocol.Method(op).String(), bindingNames[b])
		}
	}
	return m, nil
}

// observe counts one request of binding b that info describes, answered
// in d.
func (m *requestMetrics) observe(b int, info *handler.RequestInfo, d time.Duration) {
	op, v := int(info.Method), int(info.Version)
	if op >= protocol.NumMethods || v > int(protocol.V10) {
		op, v = 0, 0
	}
	m.duration[b][op].Observe(d.Seconds())
	if info.Deduplicated {
		m.deduplicated.Inc()
	}
	ci := codeIndex(info.Code)
	slot := &m.counters[b][v][op][ci]
	c := slot.Load()
	if c == nil {
		code := "other"
		if ci < len(codeLabels) {
			code = strconv.Itoa(codeLabels[ci])
		}
		version := ""
		if v != 0 {
			version = protocol.Version(v).String()
		}
		counter := m.total.WithLabelValues(m.server, protocol.Method(op).String(), version, bindingNames[b], code)
		slot.CompareAndSwap(nil, &counter)
		c = slot.Load()
	}
	(*c).Inc()
}

var (
	pushDeliveriesOpts = prometheus.CounterOpts{Namespace: "caddy", Subsystem: "a2a", Name: "push_deliveries_total",
		Help: "Push notifications that ended, by outcome (delivered, failed after every attempt, dropped with the queue full)."}
	pushRetriesOpts = prometheus.CounterOpts{Namespace: "caddy", Subsystem: "a2a", Name: "push_retries_total",
		Help: "Push notification attempts that failed and were tried again."}
)

// pushMetrics counts a backend dispatcher's outcomes, labels resolved
// when the config loads.
type pushMetrics struct {
	outcomes [push.Dropped + 1]prometheus.Counter
}

// newPushMetrics registers (or finds) the push collectors in reg.
func newPushMetrics(reg prometheus.Registerer) (*pushMetrics, error) {
	deliveries, err := register(reg, prometheus.NewCounterVec(pushDeliveriesOpts, []string{"outcome"}))
	if err != nil {
		return nil, err
	}
	retries, err := register(reg, prometheus.NewCounter(pushRetriesOpts))
	if err != nil {
		return nil, err
	}
	m := &pushMetrics{}
	m.outcomes[push.Delivered] = deliveries.WithLabelValues("delivered")
	m.outcomes[push.Failed] = deliveries.WithLabelValues("failed")
	m.outcomes[push.Dropped] = deliveries.WithLabelValues("dropped")
	m.outcomes[push.Retried] = retries
	return m, nil
}

// observe counts one outcome.
func (m *pushMetrics) observe(o push.Outcome) {
	if int(o) < len(m.outcomes) {
		m.outcomes[o].Inc()
	}
}
