package redact

import (
	"context"
	"log/slog"
)

// logView is the view of log output: named string markers, no fingerprints,
// no marker mappings.
const logView = Operator

// NewHandler returns a slog.Handler that redacts each record before inner
// sees it: the message, every string value (also inside groups and inside
// values added with WithAttrs), every other value through Value, and the
// whole value of an attribute whose key is a sensitive field name, which
// becomes "<redacted>". Attribute keys are redacted too.
//
// secrets is called once per record, so secrets learned after a logger was
// built still apply to attributes it was built with: WithAttrs and
// WithGroup are recorded and replayed on inner, redacted, for each record.
// A nil secrets func, or one returning nil, still applies the sensitive-key
// rule. A value whose redaction fails is logged as "<redaction-failed>".
func NewHandler(inner slog.Handler, secrets func() *Redactor) slog.Handler {
	return &handler{inner: inner, secrets: secrets}
}

type handler struct {
	inner   slog.Handler
	secrets func() *Redactor
	ops     []handlerOp // WithAttrs / WithGroup, in call order
}

type handlerOp struct {
	group string // WithGroup when attrs is nil
	attrs []slog.Attr
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	return h.with(handlerOp{attrs: append([]slog.Attr(nil), attrs...)})
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return h.with(handlerOp{group: name})
}

func (h *handler) with(op handlerOp) *handler {
	ops := make([]handlerOp, len(h.ops), len(h.ops)+1)
	copy(ops, h.ops)
	return &handler{inner: h.inner, secrets: h.secrets, ops: append(ops, op)}
}

func (h *handler) Handle(ctx context.Context, rec slog.Record) error {
	var red *Redactor
	if h.secrets != nil {
		red = h.secrets()
	}
	inner := h.inner
	for _, op := range h.ops {
		if op.attrs == nil {
			inner = inner.WithGroup(op.group)
			continue
		}
		inner = inner.WithAttrs(redactAttrs(red, op.attrs))
	}
	out := slog.NewRecord(rec.Time, rec.Level, red.String(rec.Message, logView), rec.PC)
	attrs := make([]slog.Attr, 0, rec.NumAttrs())
	rec.Attrs(func(a slog.Attr) bool {
		attrs = append(attrs, a)
		return true
	})
	out.AddAttrs(redactAttrs(red, attrs)...)
	return inner.Handle(ctx, out)
}

func redactAttrs(red *Redactor, attrs []slog.Attr) []slog.Attr {
	out := make([]slog.Attr, 0, len(attrs))
	for _, a := range attrs {
		out = append(out, redactAttr(red, a))
	}
	return out
}

func redactAttr(red *Redactor, a slog.Attr) slog.Attr {
	key := red.String(a.Key, logView)
	if SensitiveField(a.Key) {
		return slog.String(key, modelMarker)
	}
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(key, red.String(v.String(), logView))
	case slog.KindGroup:
		return slog.Attr{Key: key, Value: slog.GroupValue(redactAttrs(red, v.Group())...)}
	case slog.KindAny:
		rv, err := red.Value(v.Any(), logView)
		if err != nil {
			return slog.String(key, RedactionFailed)
		}
		return slog.Any(key, rv)
	}
	return slog.Attr{Key: key, Value: v} // numbers, bools, times, durations
}
