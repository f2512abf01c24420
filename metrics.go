package caddya2a

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/caddy-a2a/caddy-a2a/handler"
	"github.com/caddy-a2a/caddy-a2a/protocol"
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
	states   map[protocol.TaskState]prometheus.Counter
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
	m := &mountMetrics{states: map[protocol.TaskState]prometheus.Counter{}, runs: runs, streams: streams,
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
	if c := m.states[s]; c != nil {
		c.Inc()
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
