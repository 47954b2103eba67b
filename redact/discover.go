package redact

import (
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
// JSON fields). The walk visits at most DiscoverMaxDepth container levels
// and DiscoverMaxItems entries per container (the first by sorted key for
// mappings). Mappings that are already redaction markers are skipped. The
// result holds each (value, name, source) once, in the order found; sources
// never contain a discovered value.
func Discover(v any) []Secret {
	d := &discoverer{}
	d.walk(v, 0)
	return d.finish()
}

type discoverer struct {
	out  []Secret
	seen map[Secret]bool
	path pathStack

	under *sensitiveCtx // set while inside a container under a sensitive key
}

type sensitiveCtx struct{ name, source string }

func (d *discoverer) add(value, name, source string) {
	if utf8.RuneCountInString(strings.TrimSpace(value)) < MinSecretLen || isMarkerText(value) {
		return
	}
	s := Secret{Value: value, Name: name, Source: source}
	if d.seen == nil {
		d.seen = make(map[Secret]bool)
	}
	if d.seen[s] {
		return
	}
	d.seen[s] = true
	d.out = append(d.out, s)
}

// finish removes discovered values from the sources: a path built from
// mapping keys may itself contain a credential.
func (d *discoverer) finish() []Secret {
	if len(d.out) == 0 {
		return nil
	}
	if !d.sourcesHoldValues() {
		return d.out
	}
	r := New(d.out...)
	out := d.out[:0:0]
	seen := make(map[Secret]bool, len(d.out))
	for _, s := range d.out {
		s.Source = r.String(s.Source, Operator)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func (d *discoverer) sourcesHoldValues() bool {
	for _, s := range d.out {
		for _, o := range d.out {
			if strings.Contains(s.Source, o.Value) {
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
	if len(m) > DiscoverMaxItems {
		keys := sortedKeys(m)[:DiscoverMaxItems]
		for _, k := range keys {
			d.entry(k, m[k], level)
		}
		return
	}
	for k, v := range m {
		d.entry(k, v, level)
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
	ctx := &sensitiveCtx{name: strings.ToUpper(norm), source: "field:" + d.path.String()}
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

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// isMarker reports a mapping that is already a redaction marker:
// {redacted: true, name: string, source: string} and optionally a
// fingerprint string, nothing else.
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
		_, ok := m["fingerprint"].(string)
		return ok
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
	if i := strings.IndexAny(v, " \t"); i > 0 && isWord(v[:i]) {
		return strings.TrimSpace(v[i+1:])
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
