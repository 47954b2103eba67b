package redact

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Redactor holds a fixed set of known secrets and the per-view bounds. It
// is immutable once built, so one Redactor may be shared by any number of
// goroutines; With returns a new one. A nil *Redactor knows no secrets and
// uses the default bounds.
type Redactor struct {
	secrets []Secret
	byValue map[string]int // value → index of its first (deciding) secret
	limits  [numViews]Limits
	opts    Options

	model, named *matcher // inline markers per form
	debugOnce    sync.Once
	debug        *matcher
}

// New returns a Redactor for secrets, using the default bounds.
func New(secrets ...Secret) *Redactor { return NewWithOptions(Options{}, secrets...) }

// NewWithOptions returns a Redactor for secrets with per-view bounds.
// Secrets with an empty value are dropped; duplicates by (value, name,
// source) are merged; the rest are ordered longest value first, then by
// source and name, and the first secret of a value decides its marker name.
func NewWithOptions(opts Options, secrets ...Secret) *Redactor {
	r := &Redactor{opts: copyOptions(opts)}
	for v := range numViews {
		r.limits[v] = opts.Limits[v].normalized()
	}
	seen := make(map[Secret]bool, len(secrets))
	for _, s := range secrets {
		if s.Value == "" || seen[s] {
			continue
		}
		seen[s] = true
		r.secrets = append(r.secrets, s)
	}
	slices.SortFunc(r.secrets, func(a, b Secret) int {
		if c := cmp.Compare(len(b.Value), len(a.Value)); c != 0 {
			return c
		}
		if c := strings.Compare(a.Source, b.Source); c != 0 {
			return c
		}
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Value, b.Value)
	})
	r.byValue = make(map[string]int, len(r.secrets))
	var vals, named, model []string
	for i, s := range r.secrets {
		if _, ok := r.byValue[s.Value]; ok {
			continue
		}
		r.byValue[s.Value] = i
		vals = append(vals, s.Value)
		named = append(named, Marker(s.Name))
		model = append(model, modelMarker)
	}
	// The secrets are sorted longest first, as the matcher requires.
	r.model = buildMatcher(vals, model)
	r.named = r.model.withMarks(named)
	return r
}

// debugMatcher builds the fingerprinted markers on first use: hashing every
// secret is wasted work for the views that never show fingerprints.
func (r *Redactor) debugMatcher() *matcher {
	r.debugOnce.Do(func() {
		marks := make([]string, len(r.named.vals))
		for i, v := range r.named.vals {
			s := r.secrets[r.byValue[v]]
			marks[i] = "<redacted:" + s.Name + ":" + s.Fingerprint() + ">"
		}
		r.debug = r.named.withMarks(marks)
	})
	return r.debug
}

func copyOptions(o Options) Options { return Options{Limits: maps.Clone(o.Limits)} }

// With returns a new Redactor that knows r's secrets and more, with r's
// bounds. r itself is unchanged.
func (r *Redactor) With(more ...Secret) *Redactor {
	if r == nil {
		return New(more...)
	}
	if len(more) == 0 {
		return r
	}
	all := make([]Secret, 0, len(r.secrets)+len(more))
	all = append(append(all, r.secrets...), more...)
	return NewWithOptions(r.opts, all...)
}

// Secrets returns a copy of the known secrets in deciding order.
func (r *Redactor) Secrets() []Secret {
	if r == nil {
		return nil
	}
	return slices.Clone(r.secrets)
}

// Limits returns the effective bounds of view.
func (r *Redactor) Limits(view View) Limits {
	if r == nil || !view.valid() {
		return DefaultLimits()
	}
	return r.limits[view]
}

// String returns s with every known secret replaced by the inline marker of
// view: "<redacted>" (model), "<redacted:NAME>" (operator, event, durable)
// or "<redacted:NAME:fingerprint>" (debug). It does not bound the length.
// An unknown view is treated as model, the least revealing form.
func (r *Redactor) String(s string, view View) string {
	if r == nil || len(r.secrets) == 0 {
		return s
	}
	return r.matcher(view).replaceString(s)
}

func (r *Redactor) matcher(view View) *matcher {
	switch view {
	case Operator, Event, Durable:
		return r.named
	case Debug:
		return r.debugMatcher()
	}
	return r.model
}

// lookup returns the deciding secret whose value is exactly v.
func (r *Redactor) lookup(v string) (Secret, bool) {
	if r == nil {
		return Secret{}, false
	}
	i, ok := r.byValue[v]
	if !ok {
		return Secret{}, false
	}
	return r.secrets[i], true
}

// firstWithin returns the first secret, in deciding order, that occurs in s.
func (r *Redactor) firstWithin(s string) (Secret, bool) {
	if r == nil {
		return Secret{}, false
	}
	for _, sec := range r.secrets {
		if strings.Contains(s, sec.Value) {
			return sec, true
		}
	}
	return Secret{}, false
}
