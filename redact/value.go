package redact

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/demiurge/demiurge"
)

// Value returns a deep, redacted and bounded copy of v for view. The copy
// is made of JSON shapes only: nil, bool, numbers, string, map[string]any
// and []any; other Go values are converted (see shallow) or rendered with
// fmt %v and then redacted as strings.
//
// A value under a sensitive field name is replaced whole: by "<redacted>"
// (model), "<redacted:NAME>" (operator) or a marker mapping
// {redacted, name, source} (event, durable; debug adds the fingerprint of a
// known secret). nil, booleans and the empty string under such a key carry
// no credential and are kept. Known secrets inside any other string or
// mapping key become inline markers. Mapping keys that collide after
// redaction get "#2", "#3", ... in sorted order of the original keys.
//
// Value never panics: a panic while rendering, or fmt reporting one, is
// returned as an EINTERNAL *demiurge.Error and no partial output is
// returned. An unknown view is EINVALID.
func (r *Redactor) Value(v any, view View) (out any, err error) {
	return r.valueAt(v, view, nil)
}

func (r *Redactor) valueAt(v any, view View, prefix pathStack) (out any, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, demiurge.Errorf(demiurge.EINTERNAL, "redact: %s view: panic while redacting (%s)", view, panicText(p))
		}
	}()
	if !view.valid() {
		return nil, demiurge.Errorf(demiurge.EINVALID, "redact: unknown view %d", uint8(view))
	}
	w := &walker{r: r, view: view, lim: r.Limits(view), path: append(make(pathStack, 0, len(prefix)+16), prefix...)}
	out, err = w.value(v, 0)
	if err != nil {
		return nil, demiurge.WrapError(demiurge.EINTERNAL, err, "redact: %s view failed", view)
	}
	return out, nil
}

// panicText describes a recovered panic by type only: its text could carry
// the secrets being removed.
func panicText(p any) string { return fmt.Sprintf("%T", p) }

// RedactValue discovers the secrets in v, adds them to r's, and redacts v
// for view.
func (r *Redactor) RedactValue(v any, view View) (any, error) {
	return r.With(Discover(v)...).Value(v, view)
}

// RedactValue discovers the secrets in v and redacts v for view.
func RedactValue(v any, view View) (any, error) {
	return New(Discover(v)...).Value(v, view)
}

type walker struct {
	r    *Redactor
	view View
	lim  Limits
	path pathStack
}

// value redacts v, which sits inside level containers.
func (w *walker) value(v any, level int) (any, error) {
	switch x := v.(type) {
	case string:
		return w.str(x), nil
	case map[string]any:
		if x == nil {
			return nil, nil
		}
		return w.mapping(x, level)
	case []any:
		if x == nil {
			return nil, nil
		}
		return w.list(x, level)
	}
	if isScalar(v) {
		return v, nil
	}
	s, err := shallow(v)
	if err != nil {
		return nil, err
	}
	return w.value(s, level)
}

// str redacts then bounds s; cutting after redaction can only shorten a
// marker, never expose part of a secret.
func (w *walker) str(s string) string {
	s = w.r.String(s, w.view)
	if len(s) <= w.lim.MaxStringChars {
		return s
	}
	n := utf8.RuneCountInString(s)
	if n <= w.lim.MaxStringChars {
		return s
	}
	cut := 0
	for i := 0; i < w.lim.MaxStringChars; i++ {
		_, size := utf8.DecodeRuneInString(s[cut:])
		cut += size
	}
	return s[:cut] + "...[truncated " + strconv.Itoa(n-w.lim.MaxStringChars) + " chars]"
}

func (w *walker) mapping(m map[string]any, level int) (any, error) {
	if level+1 > w.lim.MaxDepth {
		return truncatedKey, nil
	}
	if len(m) <= w.lim.MaxItems && !w.keysChange(m) {
		// Common case: keys stay as they are, so they cannot collide and
		// the order of insertion does not matter.
		out := make(map[string]any, len(m))
		for k, v := range m {
			rv, err := w.entry(k, v, level)
			if err != nil {
				return nil, err
			}
			out[k] = rv
		}
		return out, nil
	}
	var keys []string
	if len(m) > w.lim.MaxItems {
		keys = slices.Sorted(maps.Keys(m))[:w.lim.MaxItems]
	} else {
		keys = slices.Sorted(maps.Keys(m)) // collision suffixes must not depend on map order
	}
	out := make(map[string]any, len(keys)+1)
	for _, k := range keys {
		rv, err := w.entry(k, m[k], level)
		if err != nil {
			return nil, err
		}
		put(out, w.str(k), rv)
	}
	if omitted := len(m) - len(keys); omitted > 0 {
		put(out, truncatedKey, strconv.Itoa(omitted)+" fields")
	}
	return out, nil
}

// keysChange reports whether redaction or bounding changes any key of m.
func (w *walker) keysChange(m map[string]any) bool {
	for k := range m {
		if w.str(k) != k {
			return true
		}
	}
	return false
}

func (w *walker) entry(k string, v any, level int) (any, error) {
	w.path.pushKey(k)
	defer w.path.pop()
	if SensitiveField(k) {
		return w.sensitive(k, v)
	}
	return w.value(v, level+1)
}

// put inserts k, or k#2, k#3, ... when k is taken.
func put(m map[string]any, k string, v any) {
	if _, taken := m[k]; !taken {
		m[k] = v
		return
	}
	for n := 2; ; n++ {
		kn := k + "#" + strconv.Itoa(n)
		if _, taken := m[kn]; !taken {
			m[kn] = v
			return
		}
	}
}

func (w *walker) list(l []any, level int) (any, error) {
	if level+1 > w.lim.MaxDepth {
		return truncatedKey, nil
	}
	n := min(len(l), w.lim.MaxItems)
	out := make([]any, n, n+1)
	for i := range n {
		w.path.pushIndex(i)
		v, err := w.value(l[i], level+1)
		w.path.pop()
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	if omitted := len(l) - n; omitted > 0 {
		out = append(out, "<truncated "+strconv.Itoa(omitted)+" items>")
	}
	return out, nil
}

// sensitive replaces the value under a sensitive field name whole. The
// marker names the known secret it holds, if any, else the field itself.
func (w *walker) sensitive(key string, v any) (any, error) {
	switch x := v.(type) {
	case nil, bool:
		return v, nil
	case string:
		if x == "" {
			return x, nil
		}
		norm := NormalizeField(key)
		sec, ok := w.r.lookup(x)
		if !ok && isAuthField(norm) {
			sec, ok = w.r.lookup(authCredential(x))
		}
		if !ok {
			sec, ok = w.r.firstWithin(x)
		}
		if ok {
			return w.marker(sec.Name, sec.Source, sec.Fingerprint()), nil
		}
	case map[string]any:
		if isMarker(x) {
			// Already redacted (a view being redacted again): keep its
			// name, source and fingerprint rather than renaming it.
			fp, _ := x["fingerprint"].(string)
			return w.marker(x["name"].(string), x["source"].(string), fp), nil
		}
	}
	return w.marker(strings.ToUpper(NormalizeField(key)), "field:"+w.path.String(), ""), nil
}

// marker renders the whole-value marker of the view. Name and source pass
// through inline redaction: a source path is built from mapping keys, and
// a key may itself be a secret.
func (w *walker) marker(name, source, fingerprint string) any {
	switch w.view {
	case Model:
		return modelMarker
	case Operator:
		return Marker(w.r.String(name, w.view))
	}
	m := map[string]any{
		"redacted": true,
		"name":     w.r.String(name, w.view),
		"source":   w.r.String(source, w.view),
	}
	if w.view == Debug && fingerprint != "" {
		m["fingerprint"] = fingerprint
	}
	return m
}
