package redact

import "strconv"

// View names an audience of redacted output. Each view has its own marker
// forms (see the package documentation) and its own bounds.
type View uint8

const (
	// Model is what a model provider sees: provider replay and turn history.
	Model View = iota
	// Operator is what a person sees: tool cards and UI.
	Operator
	// Event is the EventLog JSONL.
	Event
	// Durable is the SQLite runtime events.
	Durable
	// Debug is Host debug output only; it adds fingerprints.
	Debug
	numViews
)

// AllViews returns the five views in their fixed order.
func AllViews() []View { return []View{Model, Operator, Event, Durable, Debug} }

func (v View) String() string {
	switch v {
	case Model:
		return "model"
	case Operator:
		return "operator"
	case Event:
		return "event"
	case Durable:
		return "durable"
	case Debug:
		return "debug"
	}
	return "view(" + strconv.Itoa(int(v)) + ")"
}

func (v View) valid() bool { return v < numViews }

// Limits bound one view's output. A zero field takes its default.
type Limits struct {
	// MaxDepth is the number of container levels kept (the root container
	// is level 1); a deeper container becomes "<truncated>". Default 8,
	// at most 12 (the discovery depth, so nothing unexamined is emitted).
	MaxDepth int
	// MaxItems is the number of entries kept per mapping or list. Default
	// 100, at most 500 (the discovery breadth).
	MaxItems int
	// MaxStringChars is the length in characters (runes) after which a
	// string is cut and marked "...[truncated N chars]". Default 1,000,000.
	MaxStringChars int
}

// Default and ceiling bounds.
const (
	DefaultMaxDepth       = 8
	DefaultMaxItems       = 100
	DefaultMaxStringChars = 1_000_000

	// DiscoverMaxDepth and DiscoverMaxItems bound the discovery walk.
	DiscoverMaxDepth = 12
	DiscoverMaxItems = 500
)

// DefaultLimits returns the bounds used for every view unless overridden.
func DefaultLimits() Limits {
	return Limits{MaxDepth: DefaultMaxDepth, MaxItems: DefaultMaxItems, MaxStringChars: DefaultMaxStringChars}
}

// normalized fills zero fields with defaults and clamps depth and breadth
// to the discovery bounds.
func (l Limits) normalized() Limits {
	d := DefaultLimits()
	if l.MaxDepth <= 0 {
		l.MaxDepth = d.MaxDepth
	}
	if l.MaxItems <= 0 {
		l.MaxItems = d.MaxItems
	}
	if l.MaxStringChars <= 0 {
		l.MaxStringChars = d.MaxStringChars
	}
	l.MaxDepth = min(l.MaxDepth, DiscoverMaxDepth)
	l.MaxItems = min(l.MaxItems, DiscoverMaxItems)
	return l
}

// Options configure a Redactor. Views missing from Limits use DefaultLimits.
type Options struct {
	Limits map[View]Limits
}
