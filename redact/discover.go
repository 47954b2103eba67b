package redact

import (
	"maps"
	"slices"
	"strings"
	"unicode/utf8"
)

// MinSecretLen is the shortest value, in characters after trimming
// surrounding white space, that discovery records. Shorter values ("on",
// "abc", "yes") are far more likely to be ordinary words than credentials,
// and replacing them everywhere would destroy the text around them. Values
// under a sensitive key are still replaced in views whatever their length;
// only the search for their other occurrences is skipped.
const MinSecretLen = 4

// Discover returns the secrets found in v: values under sensitive field
// names and credentials recognised inside strings and mapping keys (URLs,
// command options, assignments, Authorization and API-key headers, quoted
// JSON fields, credential shapes). The walk visits at most
// DiscoverMaxDepth container levels and DiscoverMaxItems entries per
// container, mappings in sorted key order. Mappings that are already
// redaction markers are skipped. The result holds each (value, name,
// source) once, in the order found, the same for the same input; sources
// never contain a discovered value.
func Discover(v any) []Secret {
	d := &discoverer{}
	d.walk(v, 0)
	return d.finish()
}

type discoverer struct {
	out   []Secret
	parts []sourceParts // parts[i] built out[i].Source
	seen  map[Secret]bool
	path  pathStack

	under *sensitiveCtx // set while inside a container under a sensitive key
}

type sensitiveCtx struct {
	name   string
	source sourceParts
}

// sourceParts is a source as it is built: a fixed kind ("field:",
// "url:"), the dot path of the value, a fixed suffix (".password",
// ".query.") and a name taken from the text (a query parameter's). Only
// the path, made of mapping keys, and the name can hold a credential.
type sourceParts struct{ kind, path, suffix, name string }

// src is the source of kind and suffix at the current path.
func (d *discoverer) src(kind, suffix string) sourceParts {
	return sourceParts{kind: kind, path: d.path.String(), suffix: suffix}
}

func (d *discoverer) add(value, name string, src sourceParts) {
	if utf8.RuneCountInString(strings.TrimSpace(value)) < MinSecretLen || isMarkerText(value) {
		return
	}
	s := Secret{Value: value, Name: name, Source: src.kind + src.path + src.suffix + src.name}
	if d.seen == nil {
		d.seen = make(map[Secret]bool)
	}
	if d.seen[s] {
		return
	}
	d.seen[s] = true
	d.out = append(d.out, s)
	d.parts = append(d.parts, src)
	// A shape's own pattern defines its end; a written value (an
	// assignment, an option, a field) may end in an escape.
	if cut, ok := beforeEscape(value); ok && !strings.HasPrefix(src.kind, "shape:") {
		d.add(cut, name, src)
	}
}

// finish removes discovered values from the parts of the sources taken
// from the input (paths built from mapping keys, parameter names): they
// may themselves contain a credential. The fixed parts are kept as they
// are, so a short password ("pass") does not turn ".password" into a
// marker.
func (d *discoverer) finish() []Secret {
	if len(d.out) == 0 {
		return nil
	}
	if !d.partsHoldValues() {
		return d.out
	}
	r := New(d.out...)
	out := d.out[:0:0]
	seen := make(map[Secret]bool, len(d.out))
	for i, s := range d.out {
		p := d.parts[i]
		s.Source = p.kind + r.String(p.path, Operator) + p.suffix + r.String(p.name, Operator)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func (d *discoverer) partsHoldValues() bool {
	for _, p := range d.parts {
		for _, o := range d.out {
			if strings.Contains(p.path, o.Value) || strings.Contains(p.name, o.Value) {
				return true
			}
		}
	}
	return false
}

// walk visits v, which sits inside level containers.
func (d *discoverer) walk(v any, level int) {
	switch x := v.(type) {
	case string:
		d.text(x)
	case map[string]any:
		d.mapping(x, level)
	case []any:
		d.list(x, level)
	default:
		if isScalar(v) {
			return
		}
		s, err := safeShallow(v)
		if err != nil {
			return // the views fail on the same value; nothing to record
		}
		d.walk(s, level)
	}
}

func (d *discoverer) text(s string) {
	if d.under != nil {
		d.add(s, d.under.name, d.under.source)
	}
	scanText(d, s)
}

func (d *discoverer) mapping(m map[string]any, level int) {
	if level+1 > DiscoverMaxDepth || isMarker(m) {
		return
	}
	// Sorted, so that the secrets come out in the same order every time
	// and the first DiscoverMaxItems keys are the ones walked.
	keys := slices.Sorted(maps.Keys(m))
	for _, k := range keys[:min(len(keys), DiscoverMaxItems)] {
		d.entry(k, m[k], level)
	}
}

func (d *discoverer) entry(k string, v any, level int) {
	d.path.pushKey(k)
	defer d.path.pop()
	d.text(k)
	if d.under != nil || !SensitiveField(k) {
		d.walk(v, level+1)
		return
	}
	norm := NormalizeField(k)
	ctx := &sensitiveCtx{name: strings.ToUpper(norm), source: d.src("field:", "")}
	if s, ok := v.(string); ok {
		cred := s
		if isAuthField(norm) {
			cred = authCredential(s)
		}
		d.add(cred, ctx.name, ctx.source)
		scanText(d, s)
		return
	}
	d.under = ctx
	d.walk(v, level+1)
	d.under = nil
}

func (d *discoverer) list(l []any, level int) {
	if level+1 > DiscoverMaxDepth {
		return
	}
	for i, v := range l[:min(len(l), DiscoverMaxItems)] {
		d.path.pushIndex(i)
		d.walk(v, level+1)
		d.path.pop()
	}
}

// isMarker reports a mapping that is already a redaction marker, as the
// event, durable and debug views render one: exactly the keys "redacted"
// (the boolean true), "name" and "source" (strings) and, optionally,
// "fingerprint" (16 lower-case hex digits, Secret.Fingerprint). Anything
// else, a mapping with {name, source, password} or a marker with one more
// key among them, is ordinary data and is walked like any other.
func isMarker(m map[string]any) bool {
	if len(m) < 3 || len(m) > 4 {
		return false
	}
	if b, ok := m["redacted"].(bool); !ok || !b {
		return false
	}
	if _, ok := m["name"].(string); !ok {
		return false
	}
	if _, ok := m["source"].(string); !ok {
		return false
	}
	if len(m) == 4 {
		fp, ok := m["fingerprint"].(string)
		return ok && isFingerprint(fp)
	}
	return true
}

func isFingerprint(s string) bool {
	if len(s) != 16 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) && (s[i] < 'a' || s[i] > 'f') {
			return false
		}
	}
	return true
}

// isMarkerText reports an inline marker ("<redacted>", "<redacted:NAME>",
// "<redacted:NAME:fp>"), which is what a demiurge.Secret or an already
// redacted value renders as, not a credential.
func isMarkerText(v string) bool {
	if v == modelMarker {
		return true
	}
	return strings.HasPrefix(v, "<redacted:") && strings.HasSuffix(v, ">") &&
		!strings.ContainsAny(v[len("<redacted:"):len(v)-1], "<>")
}

// isAuthField reports the normalised field names whose value is
// "[scheme ]credential".
func isAuthField(norm string) bool {
	return norm == "authorization" || norm == "proxy_authorization" || strings.HasSuffix(norm, "_authorization")
}

// authCredential returns the credential of an Authorization value: the
// text after the first word when there are several, else the whole value.
func authCredential(v string) string {
	v = strings.TrimSpace(v)
	i := max(strings.IndexAny(v, " \t"), 0) // 0: one word, and no scheme before it
	if isWord(v[:i]) {
		return strings.TrimSpace(v[i:])
	}
	return v
}

// isWord reports an auth-scheme-like token: a letter then letters, digits,
// '-' or '_'.
func isWord(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isLetter(s[i]) && !isDigit(s[i]) && s[i] != '-' && s[i] != '_' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
