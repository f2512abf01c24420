package handler

import (
	"slices"
	"sync/atomic"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// liveCore is a zap core that writes through the core of the logger
// currently stored in cur: the runner is created once but must log with the
// newest config's logging setup, not with sinks an old config closed.
type liveCore struct {
	cur    *atomic.Pointer[zap.Logger]
	fields []zapcore.Field
}

func (c *liveCore) core() zapcore.Core { return c.cur.Load().Core() }

// Enabled reports whether the current core logs at l.
func (c *liveCore) Enabled(l zapcore.Level) bool { return c.core().Enabled(l) }

// With returns a core that adds fields to every entry.
func (c *liveCore) With(fields []zapcore.Field) zapcore.Core {
	return &liveCore{cur: c.cur, fields: append(slices.Clip(c.fields), fields...)}
}

// Check adds c to ce if the current core would log e.
func (c *liveCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

// Write hands e with the accumulated fields to the current core, through
// its own Check so its filters and sinks apply. The logger name comes from
// the current logger, so entries read as the module's own.
func (c *liveCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	l := c.cur.Load()
	if e.LoggerName == "" {
		e.LoggerName = l.Name()
	}
	core := l.Core()
	if len(c.fields) > 0 {
		core = core.With(c.fields)
	}
	if ce := core.Check(e, nil); ce != nil {
		ce.Write(fields...)
	}
	return nil
}

// Sync flushes the current core.
func (c *liveCore) Sync() error { return c.core().Sync() }
